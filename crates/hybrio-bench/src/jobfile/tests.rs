use super::*;
use crate::options::RwMode;

fn file(text: &str) -> Result<Vec<JobDef>, JobError> {
    resolve(&[], &[parse_job_file(Path::new("t.fio"), text)?], &[]).map(|(jobs, _)| jobs)
}

#[test]
fn globals_apply_only_to_jobs_below_them() {
    let jobs = file(
        "; comment\n[global]\nbs=8k\nsize=1m\n\n[a]\nrw=randread\n# another\n[global]\niodepth=4\n[b]\ntime_based\nruntime=2\n",
    )
    .unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(
        (
            jobs[0].options.name.as_str(),
            jobs[0].options.bs[0],
            jobs[0].options.iodepth
        ),
        ("a", 8192, 1)
    );
    assert_eq!(jobs[0].options.rw, RwMode::RandRead);
    assert_eq!(
        (jobs[1].options.iodepth, jobs[1].options.time_based),
        (4, true)
    );
    assert_eq!(
        jobs[1].own_options,
        vec![
            ("time_based".to_string(), String::new()),
            ("runtime".into(), "2".into())
        ]
    );
}

#[test]
fn command_line_form_equals_job_file() {
    let args = [
        "--bs=8k",
        "--name=a",
        "--rw=write",
        "--size=1m",
        "--name=b",
        "--size=2m",
    ];
    let (jobs, globals) = resolve(&sections_from_args(args).unwrap(), &[], &[]).unwrap();
    assert_eq!(globals, vec![("bs".to_string(), "8k".to_string())]);
    assert_eq!(jobs[0].options.rw, RwMode::Write);
    assert_eq!(jobs[1].options.rw, RwMode::Read);
    assert_eq!(jobs[1].options.bs[1], 8192);
    assert_eq!(jobs[1].options.size, Some(2 << 20));
}

#[test]
fn errors_name_file_line_and_option() {
    let err = file("[a]\nsize=1m\nbs=abc\n").unwrap_err().to_string();
    assert!(
        err.contains("'bs'") && err.contains("t.fio:3") && err.contains("abc"),
        "{err}"
    );
    let err = file("[a]\nsize=1m\niodepht=4\n").unwrap_err().to_string();
    assert!(
        err.contains("unknown option 'iodepht'") && err.contains("did you mean 'iodepth'"),
        "{err}"
    );
    let err = file("size=1m\n[a]\n").unwrap_err().to_string();
    assert!(
        err.contains("t.fio:1") && err.contains("before any [section]"),
        "{err}"
    );
    let err = file("[a\nsize=1m\n").unwrap_err().to_string();
    assert!(err.contains("malformed section header"), "{err}");
    assert!(matches!(file("[global]\nbs=4k\n"), Err(JobError::NoJobs)));
    assert!(
        file("[a]\nrw=read\n")
            .unwrap_err()
            .to_string()
            .contains("size=")
    );
    assert!(
        file("[a]\nsize=1m\nbs\n").is_err(),
        "a bare non-boolean option needs a value"
    );
    assert!(!err.contains('\n'));
}

#[test]
fn kb_base_governs_the_whole_section_wherever_it_stands() {
    let jobs =
        file("[global]\nsize=1m\nkb_base=1000\n[a]\nbs=4k\n[b]\nbs=4KiB\nkb_base=1024\nsize=1m\n")
            .unwrap();
    let a = &jobs[0].options;
    assert_eq!((a.size, a.bs[0], a.kb_base), (Some(1_000_000), 4000, 1000));
    let b = &jobs[1].options;
    assert_eq!((b.size, b.bs[0], b.kb_base), (Some(1 << 20), 4000, 1024));
    // The job's options are listed as written.
    assert_eq!(jobs[1].own_options[1].0, "kb_base");
}

#[test]
fn comments_start_anywhere_on_a_line() {
    // As fio 3.33 (`--showcmd`): `description=a;b#c` is "a".
    let jobs = file("[a] ; first\nsize=1m # one MiB\nbs=8k;x\ndescription=a;b#c\n").unwrap();
    assert_eq!(jobs[0].options.size, Some(1 << 20));
    assert_eq!(jobs[0].options.bs[0], 8192);
    assert_eq!(jobs[0].options.description, "a");
}

#[test]
fn values_are_expanded_and_bad_expansions_name_the_option() {
    let jobs = file("[a]\nsize=(2*3)m\niodepth=($ncpus*0+4)\n").unwrap();
    assert_eq!(jobs[0].options.size, Some(6 << 20));
    assert_eq!(jobs[0].options.iodepth, 4);
    let err = file("[a]\nsize=1m\nbs=${HYBRIO_TEST_SURELY_UNSET}\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "option 'bs' (t.fio:3): environment variable HYBRIO_TEST_SURELY_UNSET is not set"
    );
    let err = file("[a]\nsize=(1/0)m\n").unwrap_err().to_string();
    assert!(
        err.contains("'size' (t.fio:2)") && err.contains("division by zero"),
        "{err}"
    );
}

#[test]
fn fio_options_hybrio_lacks_are_unsupported_not_unknown() {
    let refused = |text: &str| file(text).unwrap_err().to_string();
    assert_eq!(
        refused("[a]\nsize=1m\ncgroup=x\n"),
        "option 'cgroup' (t.fio:3): fio has this; hybrio does not, because needs cgroup v1/v2 \
         control of each job's thread: hybrio's jobs are threads of one process (not implemented)"
    );
    // An engine option's reason is its engine's.
    assert_eq!(
        refused("[a]\nsize=1m\nrbdname=x\n"),
        "option 'rbdname' (t.fio:3): fio has this; hybrio does not, because an option of fio's \
         rbd engine, which hybrio does not run (a Ceph cluster and librbd)"
    );
    // One of an engine hybrio runs says why in its own words; so does an alias.
    for (text, why) in [
        (
            "userspace_reap=1",
            "because reaping libaio's completions from its ring in user space",
        ),
        ("fdp_pli=1", "because NVMe data placement (FDP or streams)"),
    ] {
        let err = refused(&format!("[a]\nsize=1m\n{text}\n"));
        assert!(err.contains(why), "{err}");
    }
    // What needs hardware says so, before any option hybrio lacks above it.
    let err = refused("[a]\nsize=1m\ncgroup=x\nzonemode=zbd\n");
    assert!(
        err.contains("zonemode=zbd needs a zoned block device"),
        "{err}"
    );
    let err = refused("[a]\nsize=1m\nverifyy=md5\n");
    assert!(err.starts_with("unknown option 'verifyy'"), "{err}");
    // An engine fio has and hybrio lacks, against a misspelt one.
    let err = refused("[a]\nsize=1m\nioengine=rdma\n");
    assert!(
        err.starts_with(
            "option 'ioengine' (t.fio:3): engine 'rdma' needs RDMA hardware (InfiniBand or RoCE)"
        ),
        "{err}"
    );
    let err = refused("[a]\nsize=1m\nioengine=io_urign\n");
    assert!(err.contains("invalid value 'io_urign'"), "{err}");
}

/// Writes `files` (name, text) into a temporary directory.
fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn include_reads_options_into_the_section() {
    let dir = dir_with(&[
        ("main.fio", "[global]\ninclude common.fio\n[a]\nsize=1m\n"),
        ("common.fio", "; shared\nbs=32k\niodepth=3\n"),
    ]);
    let sections = read_job_file(&dir.path().join("main.fio")).unwrap();
    let (jobs, _) = resolve(&[], &[sections], &[]).unwrap();
    assert_eq!((jobs[0].options.bs[0], jobs[0].options.iodepth), (32768, 3));
    // Errors in the included file name that file and its line.
    std::fs::write(dir.path().join("common.fio"), "bs=32k\nbs=huge\n").unwrap();
    let sections = read_job_file(&dir.path().join("main.fio")).unwrap();
    let err = resolve(&[], &[sections], &[]).unwrap_err().to_string();
    assert!(err.contains("common.fio:2"), "{err}");
}

#[test]
fn bad_includes_are_refused_with_their_place() {
    let dir = dir_with(&[
        ("self.fio", "[a]\nsize=1m\ninclude self.fio\n"),
        ("one.fio", "[a]\ninclude two.fio\n"),
        ("two.fio", "size=1m\ninclude one.fio\n"),
        ("early.fio", "include two.fio\n[a]\n"),
        ("sections.fio", "[a]\ninclude job.fio\n"),
        ("job.fio", "size=1m\n[b]\n"),
        ("missing.fio", "[a]\ninclude nowhere.fio\n"),
    ]);
    let err = |name: &str| {
        read_job_file(&dir.path().join(name))
            .unwrap_err()
            .to_string()
    };
    assert!(
        err("self.fio").contains("includes itself"),
        "{}",
        err("self.fio")
    );
    assert!(
        err("one.fio").contains("includes itself"),
        "{}",
        err("one.fio")
    );
    assert!(
        err("early.fio").contains("before any [section]"),
        "{}",
        err("early.fio")
    );
    let sections = err("sections.fio");
    assert!(
        sections.contains("job.fio:2") && sections.contains("options only"),
        "{sections}"
    );
    let missing = err("missing.fio");
    assert!(missing.contains("nowhere.fio"), "{missing}");
    for name in [
        "self.fio",
        "one.fio",
        "early.fio",
        "sections.fio",
        "missing.fio",
    ] {
        assert!(!err(name).contains('\n'));
    }
}

#[test]
fn binary_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.fio");
    std::fs::write(&path, b"[a]\nsize=1m\n\x00\xff\xfe").unwrap();
    let err = read_job_file(&path).unwrap_err().to_string();
    assert!(err.contains("not a text file"), "{err}");
}

#[test]
fn each_job_file_after_the_first_starts_from_the_defaults_and_a_stonewall() {
    // As fio 3.33 (tests/fio-3.33/golden/two-job-files.args): the command
    // line's global options reach its own jobs and the first file's only;
    // b.fio's jobs get neither them nor a.fio's [global], and its first
    // job starts a group.
    let a = parse_job_file(Path::new("a.fio"), "[global]\nbs=8k\n[x]\nsize=1m\n").unwrap();
    let b = parse_job_file(
        Path::new("b.fio"),
        "[global]\nrw=write\n[y]\nsize=1m\n[z]\nsize=1m\n",
    )
    .unwrap();
    let command_line = sections_from_args(["--iodepth=2", "--name=w", "--size=1m"]).unwrap();
    let (jobs, globals) = resolve(&command_line, &[a.clone(), b.clone()], &[]).unwrap();
    let seen: Vec<_> = jobs
        .iter()
        .map(|j| {
            let o = &j.options;
            (o.name.as_str(), o.bs[0], o.iodepth, o.stonewall)
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("w", 4096, 2, false),
            ("x", 8192, 2, false),
            ("y", 4096, 1, true),
            ("z", 4096, 1, false)
        ]
    );
    assert_eq!(globals, [("rw".to_string(), "write".to_string())]);
    // A later file's stonewall goes to its first job that --section keeps.
    let only = ["x".to_string(), "z".to_string()];
    let (jobs, _) = resolve(&[], &[a, b], &only).unwrap();
    let walls: Vec<_> = jobs.iter().map(|j| j.options.stonewall).collect();
    assert_eq!(walls, [false, true]);
}

#[test]
fn section_selects_jobs() {
    let sections = parse_job_file(
        Path::new("t.fio"),
        "[global]\nsize=1m\n[a]\n[b]\nbs=8k\n[c]\n",
    )
    .unwrap();
    let only = |names: &[&str]| {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        resolve(&[], std::slice::from_ref(&sections), &names).map(|(jobs, _)| {
            jobs.iter()
                .map(|j| j.options.name.clone())
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(only(&["b"]).unwrap(), ["b"]);
    // A section left out is not read: what it holds stops nothing.
    let with_unsupported =
        parse_job_file(Path::new("t.fio"), "[a]\nsize=1m\n[b]\nsize=1m\ncgroup=x\n").unwrap();
    let (jobs, _) = resolve(
        &[],
        std::slice::from_ref(&with_unsupported),
        &["a".to_string()],
    )
    .unwrap();
    assert_eq!(jobs.len(), 1);
    let err = resolve(&[], &[with_unsupported], &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("'cgroup'"), "{err}");
    assert_eq!(only(&["c", "a"]).unwrap(), ["a", "c"]);
    assert_eq!(only(&[]).unwrap(), ["a", "b", "c"]);
    assert_eq!(
        only(&["d"]).unwrap_err().to_string(),
        "--section=d: no job section of that name"
    );
}

#[test]
fn showcmd_writes_later_globals_into_the_jobs_below_them() {
    let sections = parse_job_file(
        Path::new("t.fio"),
        "[global]\nbs=8k\n[a]\nsize=1m\ndescription=first job\n[global]\niodepth=4\n[b]\nsize=2m\ntime_based\n",
    )
    .unwrap();
    let command_line = sections_from_args(["--direct=1"]).unwrap();
    let line = showcmd(&command_line, &sections);
    assert_eq!(
        line,
        "hybrio --direct=1 --bs=8k --name=a --size=1m --description='first job' --name=b --iodepth=4 --size=2m --time_based"
    );
    // The line means the same jobs.
    let words: Vec<&str> = line.split(" --").skip(1).collect();
    assert!(words.contains(&"iodepth=4"));
    let own = sections_from_args(["--name=x", "--size=1m"]).unwrap();
    assert_eq!(showcmd(&[], &own), "hybrio --name=x --size=1m");
}

#[test]
fn drop_cache_after_is_refused_where_there_is_no_cache_to_drop() {
    assert!(file("[a]\nsize=1m\ndrop_cache_after=1\n").is_ok());
    let err = file("[a]\nsize=1m\ndirect=1\ndrop_cache_after=1\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("drop_cache_after") && err.contains("direct=1"),
        "{err}"
    );
    let err = file("[a]\nsize=1m\ncompletion_latency=30us\ndrop_cache_after=1\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("completion_latency"), "{err}");
    // nowait only where the engine passes RWF_NOWAIT, as fio has it.
    for engine in ["pvsync2", "libaio", "io_uring", "adaptive"] {
        assert!(file(&format!("[a]\nsize=1m\nioengine={engine}\nnowait=1\n")).is_ok());
    }
    for engine in ["psync", "sync", "pool", "posixaio", "null"] {
        let err = file(&format!("[a]\nsize=1m\nioengine={engine}\nnowait=1\n"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("nowait") && err.contains(&format!("ioengine={engine}")),
            "{err}"
        );
    }
    let err = file("[a]\nsize=1m\nstartdelay=1-5\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'startdelay'") && err.contains("t.fio:3"),
        "{err}"
    );
}

#[test]
fn options_are_listed_under_their_own_name_as_fio_lists_them() {
    let (jobs, globals) = resolve(
        &[],
        &[parse_job_file(
            Path::new("t.fio"),
            "[global]\nss_dur=2\n[a]\nss=iops:10%\nsize=1m\n\
             blockalign=4k\nratemin=1k\niodepth_batch_submit=1\n",
        )
        .unwrap()],
        &[],
    )
    .unwrap();
    assert_eq!(
        globals,
        vec![("steadystate_duration".to_string(), "2".to_string())]
    );
    assert_eq!(
        jobs[0].own_options,
        vec![
            ("steadystate".to_string(), "iops:10%".to_string()),
            ("size".into(), "1m".into()),
            // Where fio's name is the shorter one.
            ("ba".into(), "4k".into()),
            ("rate_min".into(), "1k".into()),
            ("iodepth_batch".into(), "1".into())
        ]
    );
}
