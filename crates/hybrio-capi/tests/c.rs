//! The C API as a C programmer meets it: the header is cbindgen's output of
//! today's source, and the C examples, written against the header alone,
//! build with gcc (through the pkg-config file), copy and read real bytes
//! on every engine this system allows, and run under valgrind's memcheck
//! with no invalid access and no leak.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hybrio::engine::EngineKind;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where cargo put libhybrio_capi.a: beside this test in `target/<profile>/deps/`
/// when `cargo test` built it, or in `target/<profile>/` after `cargo build`.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .into_iter()
        .find(|dir| dir.join("libhybrio_capi.a").exists())
        .expect("cargo builds libhybrio_capi.a with the tests (crate-type staticlib)")
        .to_path_buf()
}

#[test]
fn the_header_is_what_cbindgen_writes_from_the_source() {
    let generated = std::fs::read_to_string(Path::new(env!("OUT_DIR")).join("hybrio.h")).unwrap();
    let committed = std::fs::read_to_string(manifest_dir().join("include/hybrio.h")).unwrap();
    assert!(
        generated == committed,
        "include/hybrio.h is stale: copy {}/hybrio.h over it",
        env!("OUT_DIR")
    );
}

/// `hybrio.pc` filled in for this build, in `dir`.
fn pkg_config_file(dir: &Path) {
    let text = std::fs::read_to_string(manifest_dir().join("hybrio.pc.in"))
        .unwrap()
        .replace(
            "@INCLUDEDIR@",
            &manifest_dir().join("include").display().to_string(),
        )
        .replace("@LIBDIR@", &library_dir().display().to_string())
        .replace("@VERSION@", env!("CARGO_PKG_VERSION"));
    std::fs::write(dir.join("hybrio.pc"), text).unwrap();
}

/// Builds example `name` with gcc, flags from pkg-config (static: no
/// library path to set when it runs).
fn build(name: &str, dir: &Path) -> PathBuf {
    build_from(
        &manifest_dir().join(format!("examples/c/{name}.c")),
        name,
        dir,
    )
}

/// Builds the C program `source` as `dir/name`, as [`build`] does.
fn build_from(source: &Path, name: &str, dir: &Path) -> PathBuf {
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "--static", "hybrio"])
        .env("PKG_CONFIG_PATH", dir)
        .output()
        .expect("pkg-config runs (.ci/run installs it)");
    assert!(
        flags.status.success(),
        "{}",
        String::from_utf8_lossy(&flags.stderr)
    );
    let flags = String::from_utf8(flags.stdout).unwrap();
    // -lhybrio_capi would take the .so; the archive beside it links in whole.
    let flags: Vec<String> = flags
        .split_whitespace()
        .map(|f| match f {
            "-lhybrio_capi" => library_dir().join("libhybrio_capi.a").display().to_string(),
            other => other.to_string(),
        })
        .collect();
    let program = dir.join(name);
    let out = Command::new("gcc")
        .args([
            "-std=c11",
            "-D_DEFAULT_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O1",
            "-g",
        ])
        .arg(source)
        .args(&flags)
        .arg("-o")
        .arg(&program)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gcc {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    program
}

fn valgrind_here() -> bool {
    let found = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("running without valgrind: not installed (.ci/run installs it)");
    }
    found
}

/// Runs `program` with `args`, under memcheck when `valgrind` (any invalid
/// access or a definite or indirect leak fails it).
fn run(program: &Path, args: &[&str], dir: &Path, valgrind: bool) -> Output {
    let mut command = if valgrind {
        let mut c = Command::new("valgrind");
        c.args([
            "--quiet",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect",
        ])
        .arg(program);
        c
    } else {
        Command::new(program)
    };
    let out = command.args(args).current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "{} {args:?} (valgrind: {valgrind}): {}{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The engines to run the examples on: those this system allows.
fn engines() -> Vec<&'static str> {
    [
        EngineKind::Adaptive,
        EngineKind::IoUring,
        EngineKind::Libaio,
        EngineKind::Posixaio,
        EngineKind::Pool,
        EngineKind::Psync,
    ]
    .into_iter()
    .filter(|&kind| match hybrio::probe::engine_available(kind) {
        Ok(()) => true,
        Err(reason) => {
            eprintln!("skipping {kind}: {reason}");
            false
        }
    })
    .map(EngineKind::name)
    .collect()
}

#[test]
fn the_c_examples_copy_and_read_every_byte_on_every_engine_under_memcheck() {
    let dir = tempfile::tempdir().unwrap();
    pkg_config_file(dir.path());
    let copy = build("copy", dir.path());
    let random_read = build("random_read", dir.path());
    // Not a whole number of blocks: the copy's last read is short.
    let contents: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(dir.path().join("src"), &contents).unwrap();
    let valgrind = valgrind_here();
    for engine in engines() {
        let dst = format!("dst-{engine}");
        let out = run(&copy, &[engine, "src", &dst], dir.path(), valgrind);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("copied 300000 bytes"),
            "{engine}"
        );
        assert!(
            std::fs::read(dir.path().join(&dst)).unwrap() == contents,
            "{engine}: copy differs"
        );
        let out = run(&random_read, &[engine, "src", "400"], dir.path(), valgrind);
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with("400 random reads checked"),
            "{engine}"
        );
    }
    // The default engine (NULL: adaptive), and a mistake in one clear line.
    run(&copy, &["src", "dst"], dir.path(), false);
    let out = Command::new(&copy)
        .args(["bogus", "src", "dst"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "copy: open engine: unknown engine \"bogus\" (Invalid argument)"
    );
}

/// Issue 44 (defects 1, 2, 5, 6 and a directory opened): the C program
/// `tests/c/edges.c` checks, on every engine, two writes of one buffer (one
/// cut short by RLIMIT_FSIZE) each completing as itself, the depth holding
/// when engines complete inside the queue call, the largest depth opening
/// or refused without an abort, an engine moving between threads after its
/// first commit and closing on another thread, and a directory refused.
#[test]
fn the_contracts_edges_hold_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    pkg_config_file(dir.path());
    let edges = build_from(&manifest_dir().join("tests/c/edges.c"), "edges", dir.path());
    let mut engines = engines();
    engines.extend(["pvsync2", "sync", "null"]);
    for engine in engines {
        let scratch = tempfile::tempdir_in(dir.path()).unwrap();
        let out = run(
            &edges,
            &[engine, &scratch.path().display().to_string()],
            dir.path(),
            false,
        );
        let said = String::from_utf8_lossy(&out.stdout);
        eprint!("{said}");
        assert!(
            said.contains(&format!("{engine}: every edge held")),
            "{said}"
        );
    }
}
