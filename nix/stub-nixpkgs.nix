# A stand-in for the nixpkgs flake input: `lib` and `legacyPackages.<system>` hold only the
# attributes of nixpkgs-allowlist.txt, each modelled just far enough for flake.nix to evaluate
# (nothing is built or fetched). Any other attribute is missing, as a typo or an attribute that
# nixpkgs does not have would be. Every stub derivation carries `__stub`, what the flake asked of
# it, so that eval-flake.nix can show the outputs down to the executables they install.
{ allowlist, systems }:
let
  inherit (builtins)
    all
    attrNames
    concatLists
    concatStringsSep
    elem
    elemAt
    filter
    foldl'
    genList
    getAttr
    hasAttr
    head
    isAttrs
    isFunction
    isList
    isString
    length
    listToAttrs
    map
    match
    removeAttrs
    sort
    split
    substring
    tail
    throw
    ;

  fail = msg: throw "stub nixpkgs: ${msg}";
  words = s: filter (w: isString w && w != "") (split "[ \t]+" s);
  splitOn = sep: s: filter isString (split sep s);

  # --- the allowlist ---------------------------------------------------------------------------
  rawLines = splitOn "\n" (builtins.readFile allowlist);
  numbered = genList (i: {
    n = i + 1;
    text = head (splitOn "#" (elemAt rawLines i));
  }) (length rawLines);
  knownOptions = [ "bin" "bin-if" "outputs" "home" "fn" "ps" ];
  parse = l:
    let
      fields = words l.text;
      where = "nixpkgs-allowlist.txt line ${toString l.n}";
      option = w:
        let m = match "([a-z-]+)=(.+)" w; in
        if m == null || !(elem (head m) knownOptions)
        then fail "${where}: '${w}' is not one of ${concatStringsSep ", " knownOptions} as key=value"
        else { name = head m; value = elemAt m 1; };
    in
    if length fields < 2 then fail "${where}: needs an attribute and the nixpkgs file that defines it"
    else {
      attr = head fields;
      path = splitOn "\\." (head fields);
      file = elemAt fields 1;
      opts = listToAttrs (map option (tail (tail fields)));
    };
  entries = map parse (filter (l: words l.text != [ ]) numbered);
  byAttr =
    let set = listToAttrs (map (e: { name = e.attr; value = e; }) entries); in
    if length (attrNames set) == length entries then set
    else fail "nixpkgs-allowlist.txt lists an attribute twice";
  list = name: opts: if opts ? ${name} then splitOn "," opts.${name} else [ ];

  # --- derivations -----------------------------------------------------------------------------
  hashOf = s: substring 0 32 (builtins.hashString "sha256" s);

  # A derivation: `attrs` are its mkDerivation arguments (for a nixpkgs package, the few the stub
  # knows), `binsOf attrs` the executables it installs. Outputs are derivations of their own, as
  # in nixpkgs, and overrideAttrs recomputes everything from the new attributes.
  mkDrv = { kind, system, attrs, binsOf, outputs ? [ "out" ], home ? null, attr ? null, file ? null }:
    let
      name = attrs.name or (
        if attrs ? pname then
          (if attrs ? version then "${attrs.pname}-${attrs.version}" else attrs.pname)
        else fail "a ${kind} derivation needs pname or name"
      );
      allOutputs = [ "out" ] ++ filter (o: o != "out") outputs;
      outPathOf = o:
        "/nix/store/${hashOf "${system}:${kind}:${name}:${o}"}-${name}${if o == "out" then "" else "-${o}"}";
      homeAttr = if home == null then { } else { home = "${outPathOf "out"}/${home}"; };
      outputOf = o: base // { outPath = outPathOf o; outputName = o; outputSpecified = true; };
      base = {
        type = "derivation";
        inherit name system;
        pname = attrs.pname or name;
        outPath = outPathOf "out";
        outputName = "out";
        outputs = allOutputs;
        meta = attrs.meta or { };
        passthru = attrs.passthru or { };
        overrideAttrs = f0:
          let
            final = attrs // (let x = f0 attrs; in if isFunction x then f0 final attrs else x);
          in
          mkDrv { inherit kind system binsOf outputs home attr file; attrs = final; };
        __stub = {
          inherit kind name attr file;
          # Not outPath: builtins.toJSON would print a derivation-like set as that string.
          storePath = outPathOf "out";
          bins = binsOf attrs;
          args = attrs;
        } // homeAttr;
      } // homeAttr // listToAttrs (map (o: { name = o; value = outputOf o; }) allOutputs)
        // (attrs.passthru or { });
    in
    base;

  isDrv = v: isAttrs v && v ? __stub;
  binsOfDrv = v: if isDrv v then v.__stub.bins else fail "not a package: ${builtins.typeOf v}";
  optionalMain = a: if a ? meta && a.meta ? mainProgram then [ a.meta.mainProgram ] else [ ];

  # A nixpkgs package from its allowlist line.
  package = system: e:
    let
      conditional = map (c: splitOn ":" c) (list "bin-if" e.opts);
    in
    mkDrv {
      kind = "nixpkgs";
      inherit system;
      inherit (e) attr file;
      attrs = { pname = e.attr; };
      outputs = list "outputs" e.opts;
      home = e.opts.home or null;
      binsOf = a:
        list "bin" e.opts
        ++ map head (filter (c: elem (elemAt c 1) (a.configureFlags or [ ])) conditional);
    };

  # --- the functions the flake may call ----------------------------------------------------------
  require = what: names: args:
    let missing = filter (n: !(args ? ${n})) names; in
    if missing == [ ] then args
    else fail "${what} needs ${concatStringsSep ", " missing}";

  functions = system: tree: e: {
    genAttrs = names: f: listToAttrs (map (n: { name = n; value = f n; }) names);

    # lib.getOutput "lib", as nixpkgs' makeSearchPathOutput does it.
    makeLibraryPath = pkgs:
      concatStringsSep ":" (map (p:
        let o = if !(p ? outputSpecified) || !p.outputSpecified then p.lib or p.out or p else p;
        in "${o}/lib") pkgs);

    mkDerivation = args0:
      let
        attrs = if isFunction args0 then args0 attrs else args0;
      in
      mkDrv {
        kind = "mkDerivation";
        inherit system;
        attrs = require "stdenv.mkDerivation" [ "src" ] attrs;
        binsOf = optionalMain;
        outputs = attrs.outputs or [ "out" ];
      };

    mkShell = args:
      mkDrv {
        kind = "mkShell";
        inherit system;
        attrs = { name = args.name or "nix-shell"; } // args;
        binsOf = _: [ ];
      };

    linkFarm = name: entries0:
      let
        entries =
          if isList entries0 then map (require "linkFarm entry" [ "name" "path" ]) entries0
          else map (n: { name = n; path = entries0.${n}; }) (attrNames entries0);
        inBin = map (x: elemAt x 0) (filter (x: x != null) (map (x: match "bin/([^/]+)" x.name) entries));
      in
      mkDrv {
        kind = "linkFarm";
        inherit system;
        attrs = { inherit name entries; };
        binsOf = _: inBin;
      };

    fetchFromGitHub = args:
      let
        a = require "fetchFromGitHub" [ "owner" "repo" "rev" "hash" ] args;
      in
      if match "sha256-[A-Za-z0-9+/]{43}=" a.hash == null
      then fail "fetchFromGitHub ${a.owner}/${a.repo}: hash '${a.hash}' is not an SRI sha256"
      else mkDrv {
        kind = "fetchFromGitHub";
        inherit system;
        attrs = a // { name = "source"; };
        binsOf = _: [ ];
      };

    buildMavenPackage = args:
      mkDrv {
        kind = "buildMavenPackage";
        inherit system;
        attrs = require "maven.buildMavenPackage" [ "pname" "version" "src" "mvnHash" ] args;
        binsOf = optionalMain;
      };

    # python/texlive/octave style: `withPackages (ps: [ ps.x ])` over the package set in ps=.
    withPackages = select:
      let
        parentAttr = concatStringsSep "." (filter (x: x != "withPackages") e.path);
        parent = package system byAttr.${parentAttr};
        set = foldl' (acc: k: getAttr k acc) tree (splitOn "\\." e.opts.ps);
        chosen = select set;
      in
      mkDrv {
        kind = "withPackages";
        inherit system;
        attrs = { name = "${parent.name}-env"; base = parent; packages = chosen; };
        binsOf = a: a.base.__stub.bins ++ concatLists (map binsOfDrv a.packages);
      };
  }.${e.opts.fn} or (fail "nixpkgs-allowlist.txt: no stub for fn=${e.opts.fn} (${e.attr})");

  # --- the attribute tree --------------------------------------------------------------------------
  # Parents before children, so that `maven` is a package that also has `buildMavenPackage`.
  ordered = sort (a: b: length a.path < length b.path) entries;
  insert = set: path: value:
    if length path == 1 then
      set // { ${head path} = if set ? ${head path} then value // set.${head path} else value; }
    else
      set // { ${head path} = insert (set.${head path} or { }) (tail path) value; };
  treeFor = system:
    let
      tree = foldl' (acc: e:
        insert acc e.path (if e.opts ? fn then functions system tree e else package system e)
      ) { } ordered;
    in
    tree;
  trees = listToAttrs (map (s: { name = s; value = treeFor s; }) systems);
in
{
  lib = (treeFor (head systems)).lib or { };
  legacyPackages = trees;
  # For eval-flake.nix: how many attributes the allowlist holds.
  # Every line parsed, used or not: a malformed one is an error even before the flake uses it.
  allowlistSize = builtins.deepSeq entries (length (attrNames byAttr));
}
