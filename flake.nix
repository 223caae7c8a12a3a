{
  description = "Reproducible performance study of a memcached middleware";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.11";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      # nixpkgs builds libmemcached without memaslap; the study's 2016 load generator needs it.
      libmemcachedWithMemaslap = pkgs: pkgs.libmemcached.overrideAttrs (old: {
        pname = "libmemcached-memaslap";
        configureFlags = (old.configureFlags or [ ]) ++ [ "--enable-memaslap" ];
        buildInputs = (old.buildInputs or [ ]) ++ [ pkgs.libevent ];
        env = (old.env or { }) // {
          # memaslap predates GCC 10's -fno-common default and links threads implicitly;
          # keep the recipe's own flags (-fpermissive for the C++ clients).
          NIX_CFLAGS_COMPILE = toString [ (old.env.NIX_CFLAGS_COMPILE or "") "-fcommon" "-pthread" ];
          NIX_LDFLAGS = "-lpthread";
        };
      });

      # twemproxy (nutcracker), the baseline proxy; nixpkgs does not package it. Release 0.5.0.
      mkTwemproxy = pkgs: pkgs.stdenv.mkDerivation {
        pname = "twemproxy";
        version = "0.5.0";
        src = pkgs.fetchFromGitHub {
          owner = "twitter";
          repo = "twemproxy";
          rev = "894d78378c0720642184e5bbfcb718bb179dd7ce";
          hash = "sha256-XdIBbNNfm6fthgPts3F79uxWMWQqUBABo+GM5F5Gc3A=";
        };
        # The git tree has no configure script. configure.ac unpacks the bundled libyaml
        # (contrib/yaml-0.2.5.tar.gz) and configures it as a subproject.
        nativeBuildInputs = [ pkgs.autoreconfHook ];
        # nutcracker links contrib/yaml-0.2.5/src/.libs/libyaml.a: keep the static library that
        # stdenv's default --disable-static (passed on to the subproject) would drop.
        dontDisableStatic = true;
        postInstall = ''
          # Only nutcracker belongs on PATH: drop the unit-test binary and the bundled libyaml.
          rm -f $out/bin/test_all
          rm -rf $out/lib $out/include
        '';
        meta = {
          description = "Fast, light-weight proxy for memcached and redis";
          homepage = "https://github.com/twitter/twemproxy";
          mainProgram = "nutcracker";
        };
      };

      # Debian's names for libmemcached's clients, so that code and tests call one name on every
      # path (testbed/tools.py). nixpkgs installs memaslap, memcp and memcat.
      mkDebianNames = pkgs:
        let memaslap = libmemcachedWithMemaslap pkgs; in
        pkgs.linkFarm "mwlab-debian-names" [
          { name = "bin/memcaslap"; path = "${memaslap}/bin/memaslap"; }
          { name = "bin/memccp"; path = "${memaslap}/bin/memcp"; }
          { name = "bin/memccat"; path = "${memaslap}/bin/memcat"; }
        ];

      # scheme-medium plus what paper/report.tex loads beyond it.
      tex = pkgs: pkgs.texliveMedium.withPackages (ps: with ps; [ latexmk booktabs siunitx pgf caption ]);
    in
    {
      packages = forAllSystems (pkgs: rec {
        middleware = pkgs.maven.buildMavenPackage {
          pname = "mwlab-middleware";
          version = "1.0.0";
          src = ./middleware;
          # The JDK the project targets; also what mvnHash below was computed with.
          mvnJdk = pkgs.jdk17;
          # NAR hash of the Maven dependency closure (fetchedMavenDeps: plugins, their
          # dependencies, picocli, HdrHistogram, pgjdbc, JUnit, Jazzer, JMH). Refresh it whenever
          # a POM changes: `nix build .#middleware` fails with "hash mismatch ... got: sha256-..."
          # (put that here), or without Nix run scripts/nix-mvn-hash.sh, which replays the same
          # fetch.
          mvnHash = "sha256-avYagDBikCtw75yVxjqz9kiYEo7lZvXn+BEintGpmJI=";
          mvnParameters = "-DskipTests";
          nativeBuildInputs = [ pkgs.makeWrapper ];
          installPhase = ''
            runHook preInstall
            mkdir -p $out/share/mwlab $out/bin
            cp core/target/middleware.jar loadgen/target/loadgen.jar jmh/target/benchmarks.jar \
              simplemq/target/simplemq.jar $out/share/mwlab/
            makeWrapper ${pkgs.jdk17_headless}/bin/java $out/bin/mwlab-middleware \
              --add-flags "-jar $out/share/mwlab/middleware.jar"
            makeWrapper ${pkgs.jdk17_headless}/bin/java $out/bin/mwlab-loadgen \
              --add-flags "-jar $out/share/mwlab/loadgen.jar"
            makeWrapper ${pkgs.jdk17_headless}/bin/java $out/bin/mwlab-simplemq \
              --add-flags "-jar $out/share/mwlab/simplemq.jar"
            runHook postInstall
          '';
          meta.description = "Java 17 NIO middlewares (memcached, SimpleMQ) and their load generators";
        };
        memaslap = libmemcachedWithMemaslap pkgs;
        twemproxy = mkTwemproxy pkgs;
        debian-names = mkDebianNames pkgs;
        default = middleware;
      });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          # System tools and the Python interpreter only. The Python packages (Snakemake and ruff
          # too) come from .venv, which `make setup` builds from the hashed requirements.lock and
          # requirements-test.lock as on Debian (pip --require-hashes), so both paths run the same
          # artifacts; nixpkgs' own would shadow them. The interpreter is the Python the locks
          # were made for (make check-nix compares them).
          packages = with pkgs; [
            jdk17
            maven
            memcached
            memtier-benchmark
            # SimpleMQ's database: a server per run (testbed/services/postgres.py), run as the
            # caller.
            postgresql_15
            (mkDebianNames pkgs)
            (mkTwemproxy pkgs)
            iperf3
            iproute2
            # Link delays of emulated hosts: iptables queues packets to build/nfdelay, which
            # `make build` compiles against libnetfilter_queue (found by pkg-config).
            iptables
            pkg-config
            openssh
            procps
            gnumake
            python311
            (tex pkgs)
            poppler_utils
            (octave.withPackages (ps: [ ps.queueing ]))
            nix
          ];
          buildInputs = with pkgs; [ libnetfilter_queue libnfnetlink ];
          shellHook = ''
            # The project root is the directory of flake.nix, wherever the shell was entered.
            mwlab_root=$PWD
            while [ "$mwlab_root" != / ] && [ ! -e "$mwlab_root/flake.nix" ]; do
              mwlab_root=$(dirname "$mwlab_root")
            done
            if [ -e "$mwlab_root/flake.nix" ]; then
              export PATH="$mwlab_root/.venv/bin:$PATH"
              export PYTHONPATH="$mwlab_root''${PYTHONPATH:+:$PYTHONPATH}"
            fi
            unset mwlab_root
            # PyPI's manylinux wheels (numpy, pandas, scipy, pyarrow) load the C++ runtime and
            # zlib from the system; in a Nix shell they are in the store.
            export LD_LIBRARY_PATH="${pkgs.lib.makeLibraryPath [ pkgs.stdenv.cc.cc.lib pkgs.zlib ]}''${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            export JAVA_HOME=${pkgs.jdk17.home}
          '';
        };
      });
    };
}
