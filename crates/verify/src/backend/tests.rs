//! Unit tests of provisioning: version parsing, the cache directory, discovery errors, atomic
//! writes, and `install` from a fake wheel with fake `java` and `z3`.

#[cfg(unix)]
use super::fsutil::set_executable;
use super::fsutil::{self, unique_suffix};
use super::*;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

#[test]
fn java_versions() {
    let t = "openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment";
    assert_eq!(parse_java_version(t), Some(("17.0.15".into(), 17)));
    let t = "java version \"1.8.0_292\"\nJava(TM) SE Runtime";
    assert_eq!(parse_java_version(t), Some(("1.8.0_292".into(), 8)));
    let t = "Picked up JAVA_TOOL_OPTIONS: -Xmx1g\nopenjdk version \"21\" 2023-09-19";
    assert_eq!(parse_java_version(t), Some(("21".into(), 21)));
    assert_eq!(parse_java_version("bash: java: not found"), None);
}

#[test]
fn z3_versions() {
    assert_eq!(parse_z3_version("Z3 version 4.8.12 - 64 bit"), Some((4, 8, 12)));
    assert_eq!(parse_z3_version("Z3 version 4.13.0 - 64 bit"), Some((4, 13, 0)));
    assert_eq!(parse_z3_version("Z3 version 4.5"), Some((4, 5, 0)));
    assert_eq!(parse_z3_version("z3: command not found"), None);
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    env_from_map(pairs.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect())
}

#[test]
fn cache_dir_order() {
    let e = env(&[("ALPINE_RS_CACHE", "/a"), ("XDG_CACHE_HOME", "/x")]);
    assert_eq!(cache_dir_with(None, &e).ok(), Some(PathBuf::from("/a")));
    assert_eq!(cache_dir_with(Some(Path::new("/cli")), &e).ok(), Some(PathBuf::from("/cli")));
    let e = env(&[("XDG_CACHE_HOME", "/x")]);
    assert_eq!(cache_dir_with(None, &e).ok(), Some(PathBuf::from("/x/alpine-rs")));
}

#[test]
fn missing_components_have_actionable_messages() {
    let dir = std::env::temp_dir().join(format!("alpine-rs-test-{}", unique_suffix()));
    let layout = CacheLayout::new(&dir);
    let e = env(&[("PATH", "/nonexistent")]);
    let err = find_silicon(&layout, &Manifest::default(), &e).unwrap_err();
    assert!(err.to_string().contains("alpine-rs backend install"), "{err}");
    let err = find_z3(&layout, &e).unwrap_err();
    assert!(matches!(err, BackendError::Z3Missing), "{err}");
    assert!(err.to_string().contains("ALPINE_Z3"));
    let err = find_java(&e).unwrap_err();
    assert!(err.to_string().contains("Java 17 or newer"), "{err}");
    let e = env(&[("ALPINE_Z3", "/bin/true")]);
    let err = find_z3(&layout, &e).unwrap_err();
    assert!(matches!(err, BackendError::Z3TooOld { .. }), "{err}");
    assert_eq!(err.exit_code(), 3);
}

/// A z3 in the cache that does not run (a truncated download, an overwritten file) is reported
/// as damaged, with the repair command, not as a z3 that is too old.
#[cfg(unix)]
#[test]
fn a_damaged_cached_z3_names_the_repair() {
    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-z3-test").unwrap();
    let layout = CacheLayout::new(dir.path());
    let z3_dir = layout.z3();
    let z3_dir = z3_dir.parent().unwrap();
    fs::create_dir_all(z3_dir).unwrap();
    let e = env(&[("PATH", "/nonexistent")]);
    // One that fails, one that prints nothing: no version to read.
    for body in ["exit 127", "exit 0"] {
        script(z3_dir, "z3", body);
        let err = find_z3(&layout, &e).unwrap_err();
        assert!(matches!(err, BackendError::Z3Damaged { .. }), "{body}: {err}");
        assert!(err.to_string().contains("alpine-rs backend install"), "{err}");
    }
    // A truncated binary: the ELF header cut short.
    let mut f = File::create(layout.z3()).unwrap();
    f.write_all(b"\x7fELF\x02\x01\x01").unwrap();
    drop(f);
    let err = find_z3(&layout, &e).unwrap_err();
    assert!(matches!(err, BackendError::Z3Damaged { .. }), "{err}");
}

#[test]
fn atomic_write_leaves_no_temporaries() {
    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-test").unwrap();
    let dest = dir.path().join("sub").join("f.txt");
    atomic_write(&dest, b"one").unwrap();
    atomic_write(&dest, b"two").unwrap();
    assert_eq!(fs::read(&dest).unwrap(), b"two");
    let names: Vec<_> =
        fs::read_dir(dest.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![OsString::from("f.txt")]);
}

/// Writes an executable shell script (fake java / z3 for install tests).
#[cfg(unix)]
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    let f = File::open(&p).unwrap();
    set_executable(&f).unwrap();
    p
}

fn fake_wheel(path: &Path, members: &[(&str, &[u8])]) {
    let mut w = zip::ZipWriter::new(File::create(path).unwrap());
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data) in members {
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap();
}

/// Install from a (fake) wheel with fake java and z3: no network, no JVM.
#[cfg(unix)]
#[test]
fn install_from_wheel_is_atomic_idempotent_and_checks_pins() {
    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-install-test").unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let java = script(&bin, "java", "echo 'openjdk version \"17.0.9\" 2023-10-17' >&2");
    let z3 = script(&bin, "z3", "echo 'Z3 version 4.8.12 - 64 bit'");
    let wheel = dir.path().join("nagini-1.2.0-py3-none-any.whl");
    fake_wheel(&wheel, &[("nagini/__init__.py", b""), (SILICON_JAR_MEMBER, b"not really a jar")]);
    let cache = dir.path().join("cache");
    let e = env(&[
        ("ALPINE_JAVA", java.to_str().unwrap()),
        ("ALPINE_Z3", z3.to_str().unwrap()),
        ("PATH", "/nonexistent"),
    ]);
    let opts = InstallOptions {
        cache_dir: Some(cache.clone()),
        from_wheel: Some(wheel.clone()),
        compile_driver: false,
        create_cds: false,
        ..InstallOptions::default()
    };
    let mut lines = Vec::new();
    let r = install_with_env(&opts, &mut |l| lines.push(l.to_string()), &e).unwrap();
    assert_eq!(r.silicon_step, Step::FromWheel);
    assert_eq!(r.z3_step, Step::Kept);
    assert_eq!(r.z3, z3);
    let layout = CacheLayout::new(&cache);
    assert_eq!(fs::read(layout.silicon_jar()).unwrap(), b"not really a jar");
    assert_eq!(r.silicon_sha256, sha256_hex(b"not really a jar"));
    // Both pins mismatch: warnings, not errors.
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(lines.iter().any(|l| l == "extracting silicon.jar…"), "{lines:?}");
    let m = Manifest::load(&layout);
    assert_eq!(m.silicon.as_ref().map(|s| s.sha256.as_str()), Some(r.silicon_sha256.as_str()));
    assert_eq!(m.z3_version.as_deref(), Some("Z3 version 4.8.12 - 64 bit"));
    // No temporaries left behind.
    let leftovers: Vec<_> = fs::read_dir(layout.backend_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".lock")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Discovery accepts the installed jar (its hash matches the manifest) but it is not the
    // pinned one.
    let (s, w) = find_silicon(&layout, &m, &e).unwrap();
    assert!(!s.pinned);
    assert_eq!(w.len(), 1);
    // A corrupted jar is an error, with the repair command.
    fs::write(layout.silicon_jar(), b"corrupted").unwrap();
    let err = find_silicon(&layout, &Manifest::load(&layout), &e).unwrap_err();
    assert!(matches!(err, BackendError::SiliconCorrupt { .. }), "{err}");
    assert!(err.to_string().contains("alpine-rs backend install"));

    // The fake jar does not have the pinned hash, so a rerun extracts it again (repair).
    let r = install_with_env(&opts, &mut |_| {}, &e).unwrap();
    assert_eq!(r.silicon_step, Step::FromWheel);
    assert_eq!(fs::read(layout.silicon_jar()).unwrap(), b"not really a jar");

    // A wheel without the member is reported as such.
    let bad = dir.path().join("other.whl");
    fake_wheel(&bad, &[("x.txt", b"x")]);
    let err = install_with_env(
        &InstallOptions { from_wheel: Some(bad), ..opts.clone() },
        &mut |_| {},
        &e,
    )
    .unwrap_err();
    assert!(matches!(err, BackendError::WheelMember { .. }), "{err}");
}

#[cfg(unix)]
#[test]
fn install_reports_pip_failures_with_the_offline_alternative() {
    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-install-test").unwrap();
    let java = script(dir.path(), "java", "echo 'openjdk version \"17.0.9\"' >&2");
    let python =
        script(dir.path(), "python3", "echo 'ERROR: No matching distribution' >&2; exit 1");
    let e = env(&[("ALPINE_JAVA", java.to_str().unwrap()), ("PATH", "/nonexistent")]);
    let opts = InstallOptions {
        cache_dir: Some(dir.path().join("cache")),
        python,
        ..InstallOptions::default()
    };
    let mut lines = Vec::new();
    let err = install_with_env(&opts, &mut |l| lines.push(l.to_string()), &e).unwrap_err();
    assert_eq!(
        err.to_string(),
        "could not download nagini==1.2.0 with pip (exit 1: ERROR: No matching distribution). \
             Download the wheel elsewhere and run 'alpine-rs backend install --from-wheel FILE'."
    );
    assert!(lines.contains(&"downloading nagini 1.2.0 (68 MB) with pip…".to_string()));
    // Too old a Java is refused before anything is downloaded.
    let old = script(dir.path(), "oldjava", "echo 'java version \"1.8.0_292\"' >&2");
    let e = env(&[("ALPINE_JAVA", old.to_str().unwrap())]);
    let err = install_with_env(&opts, &mut |_| {}, &e).unwrap_err();
    assert!(err.to_string().starts_with("Java 17 or newer is required"), "{err}");
    assert!(err.to_string().contains("1.8.0_292"), "{err}");
}

#[test]
fn hashing() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

// ------------------------------------------------------------------------------------------------
// CUDA toolchain (`backend install --cuda`), with fake wheels, a fake nvcc and a fake g++

/// A fake nvcc: `--version` prints a release line; otherwise it writes a PTX-like file to `-o`.
#[cfg(unix)]
const FAKE_NVCC: &str = "case \"$1\" in --version) echo 'Cuda compilation tools, release 13.5, \
                         V13.5.37'; exit 0;; esac\nout=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] \
                         && out=$2; shift; done\necho '.entry alpine_smoke' > \"$out\"";

/// The four wheels of `version` in `dir`, with the members nvcc's layout needs.
#[cfg(unix)]
fn fake_cuda_wheels(dir: &Path, version: &str, nvcc_body: &str) {
    use cuda::CUDA_WHEELS;
    let members: [&[(&str, &[u8], u32)]; 4] = [
        &[
            ("nvidia/cu13/nvvm/bin/cicc", b"cicc", 0o755),
            ("nvidia/cu13/lib/libnvvm.so.4", b"so", 0o644),
        ],
        &[("nvidia/cu13/bin/nvcc", nvcc_body.as_bytes(), 0o755)],
        &[
            ("nvidia/cu13/include/cuda_runtime.h", b"", 0o644),
            ("nvidia/cu13/lib/libcudart_static.a", b"", 0o644),
        ],
        &[("nvidia/cu13/include/crt/host_config.h", b"", 0o644)],
    ];
    for (w, members) in CUDA_WHEELS.iter().zip(members) {
        let name = format!("{}-{version}-py3-none-any.whl", w.package.replace('-', "_"));
        let mut z = zip::ZipWriter::new(File::create(dir.join(name)).unwrap());
        for (member, data, mode) in members {
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored)
                .unix_permissions(*mode);
            z.start_file(*member, opts).unwrap();
            z.write_all(data).unwrap();
        }
        z.start_file("x.dist-info/METADATA", zip::write::SimpleFileOptions::default()).unwrap();
        z.finish().unwrap();
    }
}

#[cfg(unix)]
#[test]
fn cuda_install_from_wheels_is_atomic_idempotent_and_found_first_in_the_cache() {
    use cuda::*;
    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-cuda-test").unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let gxx = script(&bin, "g++", "exit 0");
    let wheels = dir.path().join("wheels");
    fs::create_dir_all(&wheels).unwrap();
    fake_cuda_wheels(&wheels, CUDA_VERSION, &format!("#!/bin/sh\n{FAKE_NVCC}\n"));
    let cache = dir.path().join("cache");
    let e = env(&[("PATH", bin.to_str().unwrap())]);
    let opts = CudaInstallOptions {
        cache_dir: Some(cache.clone()),
        wheel_dir: Some(wheels.clone()),
        ..CudaInstallOptions::default()
    };
    let mut lines = Vec::new();
    let r = install_cuda_with_env(&opts, &mut |l| lines.push(l.to_string()), &e).unwrap();
    assert_eq!(r.step, Step::FromWheel);
    let cuda = CacheLayout::new(&cache).cuda_dir();
    assert_eq!(r.nvcc, cuda.join("bin/nvcc"));
    assert_eq!(r.nvcc_version, "Cuda compilation tools, release 13.5, V13.5.37");
    assert!(fsutil::is_executable(&cuda.join("nvvm/bin/cicc")));
    assert!(cuda.join("include/crt/host_config.h").is_file());
    assert!(!cuda.join("lib/libnvvm.so.4").exists(), "libnvvm is not needed by nvcc");
    // The fake wheels have other hashes than the pinned ones: one warning each, not an error.
    assert_eq!(r.warnings.len(), 4, "{:?}", r.warnings);
    assert!(r.smoke.is_some(), "{lines:?}");
    assert!(lines.iter().any(|l| l == "unpacking nvidia-cuda-nvcc…"), "{lines:?}");
    let leftovers: Vec<_> = fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let tc = locate_nvcc(Some(&cache), &e).unwrap();
    assert_eq!(tc.origin, Origin::Cache);
    assert_eq!(tc.host_compiler, gxx);
    assert_eq!(tc.include_dir, Some(cuda.join("include")));
    assert_eq!(tc.lib_dir, Some(cuda.join("lib")));
    let out = compile_ptx_source(&tc, "k.cu", "__global__ void k() {}", &PtxOptions::default());
    assert_eq!(out.unwrap().ptx.trim(), ".entry alpine_smoke");

    // A second run keeps the install.
    let r = install_cuda_with_env(&opts, &mut |_| {}, &e).unwrap();
    assert_eq!(r.step, Step::Kept);
    assert_eq!(r.wheels.len(), 4);

    // Wheels whose nvcc does not run never replace a working install.
    let bad = dir.path().join("bad");
    fs::create_dir_all(&bad).unwrap();
    fake_cuda_wheels(&bad, "13.9.1", "#!/bin/sh\nexit 1\n");
    let bad_opts =
        CudaInstallOptions { version: "13.9.1".into(), wheel_dir: Some(bad), ..opts.clone() };
    let err = install_cuda_with_env(&bad_opts, &mut |_| {}, &e).unwrap_err();
    assert!(matches!(err, CudaError::Broken { .. }), "{err}");
    assert_eq!(err.exit_code(), 3);
    assert_eq!(locate_nvcc(Some(&cache), &e).unwrap().version, tc.version);

    // A folder without the wheels says which one is missing.
    let empty = dir.path().join("empty");
    fs::create_dir_all(&empty).unwrap();
    let err = install_cuda_with_env(
        &CudaInstallOptions {
            wheel_dir: Some(empty),
            cache_dir: Some(dir.path().join("c2")),
            ..opts.clone()
        },
        &mut |_| {},
        &e,
    )
    .unwrap_err();
    assert!(err.to_string().contains("nvidia_nvvm-13.5.37-"), "{err}");
    // CUDA 12's nvcc wheels hold no nvcc: refused before any download.
    let err = install_cuda_with_env(
        &CudaInstallOptions { version: "12.9.86".into(), ..opts.clone() },
        &mut |_| {},
        &e,
    )
    .unwrap_err();
    assert!(err.to_string().contains("only releases 13 and later"), "{err}");
}

#[cfg(unix)]
#[test]
fn nvcc_discovery_order_and_errors() {
    use cuda::*;
    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-cuda-test").unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let on_path = script(&bin, "nvcc", FAKE_NVCC);
    let empty_cache = dir.path().join("cache");
    let path = bin.to_str().unwrap();
    // Without g++, nvcc cannot even preprocess: the toolchain is reported unusable.
    let e = env(&[("PATH", path)]);
    let err = locate_nvcc(Some(&empty_cache), &e).unwrap_err();
    assert!(matches!(err, CudaError::NoHostCompiler), "{err}");
    assert_eq!(err.exit_code(), 3);
    script(&bin, "g++", "exit 0");
    let tc = locate_nvcc(Some(&empty_cache), &e).unwrap();
    assert_eq!((tc.nvcc, tc.origin), (on_path, Origin::Path));
    // $ALPINE_RS_NVCC comes first, and a broken one is reported rather than replaced.
    let other = dir.path().join("other");
    fs::create_dir_all(&other).unwrap();
    let chosen = script(&other, "nvcc", FAKE_NVCC);
    let e = env(&[("PATH", path), (NVCC_ENV, chosen.to_str().unwrap())]);
    let tc = locate_nvcc(Some(&empty_cache), &e).unwrap();
    assert_eq!((tc.nvcc, tc.origin), (chosen, Origin::Env(NVCC_ENV)));
    let e = env(&[("PATH", path), (NVCC_ENV, "/nonexistent/nvcc")]);
    let err = locate_nvcc(Some(&empty_cache), &e).unwrap_err();
    assert!(err.to_string().contains("$ALPINE_RS_NVCC"), "{err}");
    assert_eq!(err.exit_code(), 3);
    // Nothing anywhere.
    let e = env(&[("PATH", "/nonexistent")]);
    let err = locate_nvcc(Some(&empty_cache), &e).unwrap_err();
    assert!(matches!(err, CudaError::NotProvisioned));
    assert!(err.to_string().contains("alpine-rs backend install --cuda"), "{err}");
    // The doctor reports an absent toolchain as optional unless asked for it.
    let (c, w) = doctor_component(Some(&empty_cache), &e, false);
    assert!(c.problem.is_none() && w.is_empty() && c.note.starts_with("absent"), "{c:?}");
    let (c, _) = doctor_component(Some(&empty_cache), &e, true);
    assert!(c.problem.is_some(), "{c:?}");
}

/// A damaged compiled driver (a truncated class, a deleted one, an extra stray class) is not
/// taken for installed: discovery compiles it again. A fake `javac` next to a fake `java` writes
/// the classes and counts its runs; no JVM is started.
#[cfg(unix)]
#[test]
fn a_damaged_driver_is_detected_and_recompiled() {
    let dir = TempDir::new_in(&std::env::temp_dir(), "alpine-rs-driver-test").unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let java = script(&bin, "java", "echo 'openjdk version \"17.0.9\" 2023-10-17' >&2");
    let runs = dir.path().join("javac-runs");
    script(
        &bin,
        "javac",
        &format!(
            "echo run >> '{}'\nprev=''\nfor a in \"$@\"; do\n  if [ \"$prev\" = -d ]; then\n    \
             printf 'class bytes' > \"$a/AlpineSilicon.class\"\n    \
             printf 'inner bytes' > \"$a/AlpineSilicon\\$Reply.class\"\n    exit 0\n  fi\n  \
             prev=\"$a\"\ndone\nexit 1",
            runs.display()
        ),
    );
    let z3 = script(&bin, "z3", "echo 'Z3 version 4.8.12 - 64 bit'");
    let jar = dir.path().join("silicon.jar");
    fs::write(&jar, b"fake").unwrap();
    let e = env(&[
        ("ALPINE_JAVA", java.to_str().unwrap()),
        ("ALPINE_Z3", z3.to_str().unwrap()),
        ("ALPINE_SILICON_JAR", jar.to_str().unwrap()),
        ("PATH", "/nonexistent"),
    ]);
    let cfg = BackendConfig {
        cache_dir: Some(dir.path().join("cache")),
        mode: crate::silicon::RunMode::Batch,
        ..BackendConfig::default()
    };
    let compiles = || fs::read_to_string(&runs).map_or(0, |s| s.lines().count());
    let c = discover_components(&cfg, &e).unwrap();
    let class_dir = c.driver.expect("a driver").class_dir;
    assert_eq!(compiles(), 1);
    // Up to date: kept.
    discover_components(&cfg, &e).unwrap();
    assert_eq!(compiles(), 1, "an intact driver is not recompiled");
    let main = class_dir.join("AlpineSilicon.class");
    let damages: [(&str, &dyn Fn()); 3] = [
        ("truncated", &|| fs::write(&main, b"class").unwrap()),
        ("deleted", &|| fs::remove_file(class_dir.join("AlpineSilicon$Reply.class")).unwrap()),
        ("stray", &|| fs::write(class_dir.join("Other.class"), b"x").unwrap()),
    ];
    for (i, (what, damage)) in damages.iter().enumerate() {
        damage();
        let s = find_silicon(&CacheLayout::new(dir.path().join("cache")), &Manifest::default(), &e)
            .unwrap()
            .0;
        assert!(
            installed_driver(&CacheLayout::new(dir.path().join("cache")), &s).is_none(),
            "{what}"
        );
        let c = discover_components(&cfg, &e).unwrap();
        assert!(c.driver.is_some(), "{what}");
        assert_eq!(compiles(), 2 + i, "{what}: recompiled");
        assert_eq!(fs::read(&main).unwrap(), b"class bytes", "{what}: repaired");
        assert!(!class_dir.join("Other.class").exists(), "{what}");
    }
}
