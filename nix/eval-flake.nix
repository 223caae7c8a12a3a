# Evaluates a flake's `outputs` against the stub nixpkgs (stub-nixpkgs.nix) and returns every
# package and dev shell of every system as JSON-able data, down to the arguments of each
# derivation, so that `nix-instantiate --eval --strict --json` forces every attribute the flake
# refers to. Offline: nothing is fetched, built or written to a store.
{ flake ? ../flake.nix, allowlist ? ./nixpkgs-allowlist.txt }:
let
  inherit (builtins) isAttrs isFunction isList isPath mapAttrs typeOf;
  toPath = p: if isPath p then p else /. + p;
  systems = [ "x86_64-linux" "aarch64-linux" ];
  nixpkgs = import ./stub-nixpkgs.nix { allowlist = toPath allowlist; inherit systems; };
  outputs = (import (toPath flake)).outputs {
    self = outputs // { outPath = "/nix/store/00000000000000000000000000000000-source"; };
    inherit nixpkgs;
  };

  # Derivations become what the flake asked of them (their arguments, themselves projected);
  # functions become a marker, paths their name (never copied to a store).
  project = v:
    if isAttrs v && v ? __stub then
      v.__stub // { args = project v.__stub.args; }
    else if isAttrs v then mapAttrs (_: project) v
    else if isList v then map project v
    else if isFunction v then "<function>"
    else if isPath v then toString v
    else v;
in
{
  allowlistSize = nixpkgs.allowlistSize;
  inherit systems;
  packages = project (outputs.packages or { });
  devShells = project (outputs.devShells or { });
}
