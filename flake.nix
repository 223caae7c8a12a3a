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

      pythonEnv = pkgs: pkgs.python3.withPackages (ps: with ps; [
        click
        jsonschema
        matplotlib
        numpy
        pandas
        pyarrow
        pydantic
        pymemcache
        pytest
        pytest-timeout
        pyyaml
        rich
        scipy
        seaborn
        simpy
        statsmodels
      ]);

      tex = pkgs: pkgs.texliveMedium.withPackages (ps: with ps; [ latexmk booktabs siunitx ]);
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
          # dependencies, picocli, HdrHistogram, JUnit, Jazzer, JMH). Refresh it whenever a POM
          # changes: `nix build .#middleware` fails with "hash mismatch ... got: sha256-..." (put
          # that here), or without Nix run scripts/nix-mvn-hash.sh, which replays the same fetch.
          mvnHash = "sha256-d1tobG3ROz5yonFQPUE7LKtEVW7eDK3nSDAht6vVQPM=";
          mvnParameters = "-DskipTests";
          nativeBuildInputs = [ pkgs.makeWrapper ];
          installPhase = ''
            runHook preInstall
            mkdir -p $out/share/mwlab $out/bin
            cp core/target/middleware.jar loadgen/target/loadgen.jar jmh/target/benchmarks.jar $out/share/mwlab/
            makeWrapper ${pkgs.jdk17_headless}/bin/java $out/bin/mwlab-middleware \
              --add-flags "-jar $out/share/mwlab/middleware.jar"
            makeWrapper ${pkgs.jdk17_headless}/bin/java $out/bin/mwlab-loadgen \
              --add-flags "-jar $out/share/mwlab/loadgen.jar"
            runHook postInstall
          '';
          meta.description = "Java 17 NIO memcached middleware and its closed-loop load generator";
        };
        memaslap = libmemcachedWithMemaslap pkgs;
        default = middleware;
      });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = with pkgs; [
            jdk17
            maven
            memcached
            memtier-benchmark
            (libmemcachedWithMemaslap pkgs)
            twemproxy
            iperf3
            iproute2
            openssh
            procps
            gnumake
            (pythonEnv pkgs)
            snakemake
            ruff
            (tex pkgs)
            poppler_utils
            (octave.withPackages (ps: [ ps.queueing ]))
          ];
          shellHook = ''
            export PYTHONPATH="$PWD''${PYTHONPATH:+:$PYTHONPATH}"
            export JAVA_HOME=${pkgs.jdk17}
          '';
        };
      });
    };
}
