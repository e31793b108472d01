//! The checker's tests: what it writes, and what it finds in what it reads.

use super::*;

/// A job's config: 4 KiB blocks, as fio 3.42, every header field checked.
pub(in crate::verify) fn config(kind: VerifyKind) -> VerifyConfig {
    VerifyConfig {
        kind,
        interval: 4096,
        header_offset: 0,
        pattern: None,
        pattern_interval: 0,
        fatal: false,
        dump: false,
        fio: FioVersion::NEWEST,
        header_seed: true,
        write_sequence: true,
    }
}

fn as_fio(kind: VerifyKind, fio: &str) -> VerifyConfig {
    VerifyConfig {
        fio: FioVersion::parse(fio).unwrap(),
        ..config(kind)
    }
}

/// The 16 kinds that write a header: all but pattern without one and null.
fn every_kind() -> impl Iterator<Item = VerifyKind> {
    VerifyKind::ALL.into_iter().filter(|k| {
        !matches!(
            k,
            VerifyKind::Pattern | VerifyKind::PatternNoHeader | VerifyKind::Null
        )
    })
}

fn written(verifier: &mut Verifier, len: usize, offset: u64) -> (Vec<u8>, u64) {
    let mut buf = vec![0; len];
    let seed = verifier.fill(&mut buf, offset, 7, SystemTime::now());
    (buf, seed)
}

#[test]
fn every_kind_passes_what_it_wrote_and_catches_a_flipped_bit() {
    assert_eq!(every_kind().count(), 16);
    for kind in every_kind() {
        let mut verifier = Verifier::new(config(kind), 1, 42, false);
        let (mut buf, seed) = written(&mut verifier, 8192, 4096 * 3);
        let expected = Expected {
            rand_seed: Some(seed),
            numberio: Some(7),
        };
        let good = verifier.check(&mut buf.clone(), 4096 * 3, Path::new("f"), expected);
        assert_eq!((good.blocks, good.mismatches.len()), (2, 0), "{kind:?}");
        // A bit in the second block's last byte: caught by every kind
        // that checksums data (fio's SHA-512 included, which covers
        // only the data's ends); meta sees only headers.
        buf[8191] ^= 0x10;
        let bad = verifier.check(&mut buf, 4096 * 3, Path::new("f"), expected);
        let caught = usize::from(kind != VerifyKind::Meta);
        assert_eq!(bad.mismatches.len(), caught, "{kind:?}");
        if let Some(m) = bad.mismatches.first() {
            assert_eq!(m.offset, 4096 * 4, "{kind:?}");
            assert!(m.to_string().contains("Expected CRC"), "{m}");
        }
    }
}

#[test]
fn each_layout_is_written_as_its_fio_writes_it_and_read_whatever_this_run_writes() {
    for (writer, version_byte) in [("3.33", 5), ("3.40", 5), ("3.41", 0x81)] {
        let mut verifier = Verifier::new(as_fio(VerifyKind::Crc32c, writer), 1, 42, false);
        let (buf, seed) = written(&mut verifier, 4096, 0);
        assert_eq!(buf[2], version_byte, "fio {writer}");
        for reader in ["3.33", "3.42"] {
            let reader = Verifier::new(as_fio(VerifyKind::Crc32c, reader), 1, 42, false);
            let expected = Expected {
                rand_seed: Some(seed),
                numberio: Some(7),
            };
            let checked = reader.check(&mut buf.clone(), 0, Path::new("f"), expected);
            assert_eq!(checked.blocks, 1);
            assert!(checked.mismatches.is_empty(), "{:?}", checked.mismatches);
        }
    }
}

#[test]
fn a_header_of_an_unknown_version_is_refused_naming_it() {
    let mut verifier = Verifier::new(config(VerifyKind::Md5), 1, 42, false);
    let (mut buf, _) = written(&mut verifier, 4096, 0);
    buf[2] = 0x82;
    let checked = verifier.check(&mut buf, 0, Path::new("f"), Expected::default());
    assert_eq!(checked.mismatches.len(), 1);
    let said = checked.mismatches[0].to_string();
    assert!(
        said.starts_with("verify: unsupported header version 82, wanted 81"),
        "{said}"
    );
}

#[test]
fn sha512_is_checked_as_the_header_says_it_was_written() {
    let case = |writer: &str, reader: &str| {
        let mut w = Verifier::new(as_fio(VerifyKind::Sha512, writer), 1, 42, false);
        let (buf, _) = written(&mut w, 4096, 0);
        let r = Verifier::new(as_fio(VerifyKind::Sha512, reader), 1, 42, false);
        let mut bad = buf.clone();
        bad[2000] ^= 1;
        let checked = r.check(&mut buf.clone(), 0, Path::new("f"), Expected::default());
        let caught = r.check(&mut bad, 0, Path::new("f"), Expected::default());
        (checked.mismatches.len(), caught.mismatches.len())
    };
    // Either fio's unversioned header is taken with either SHA-512, by
    // a run as any fio; a versioned one only with the finished SHA-512.
    for writer in ["3.33", "3.39", "3.42"] {
        for reader in ["3.33", "3.39", "3.42"] {
            let (good, bad) = case(writer, reader);
            assert_eq!(good, 0, "written as {writer}, read as {reader}");
            // fio 3.38's SHA-512 covers only the data's ends.
            let caught = usize::from(writer != "3.33");
            assert_eq!(bad, caught, "written as {writer}, read as {reader}");
        }
    }
    // A versioned header with fio 3.38's SHA-512 is not fio's: refused.
    let mut new = Verifier::new(config(VerifyKind::Sha512), 1, 42, false);
    let (mut buf, _) = written(&mut new, 4096, 0);
    let (head, data) = buf.split_at_mut(48 + 128);
    VerifyKind::Sha512.checksum(data, &mut head[48..], Sha512::Unfinished);
    let checked = new.check(&mut buf, 0, Path::new("f"), Expected::default());
    assert_eq!(checked.mismatches.len(), 1);
}

#[test]
fn the_seed_and_sequence_checks_can_be_turned_off() {
    let mut verifier = Verifier::new(config(VerifyKind::Crc32c), 1, 42, false);
    let (buf, seed) = written(&mut verifier, 4096, 0);
    let wrong = Expected {
        rand_seed: Some(seed + 1),
        numberio: Some(8),
    };
    let said = |c: VerifyConfig| {
        let v = Verifier::new(c, 1, 42, false);
        let checked = v.check(&mut buf.clone(), 0, Path::new("f"), wrong);
        checked.mismatches.first().map(|m| m.detail.clone())
    };
    let mut c = config(VerifyKind::Crc32c);
    assert!(said(c.clone()).unwrap().starts_with("bad header rand_seed"));
    c.header_seed = false;
    assert_eq!(said(c.clone()).unwrap(), "bad header numberio 7, wanted 8");
    c.write_sequence = false;
    assert_eq!(said(c), None);
}

#[test]
fn a_pattern_starts_again_every_pattern_interval() {
    let mut c = config(VerifyKind::Pattern);
    c.pattern = Some(Pattern::parse("%o", true).unwrap());
    c.pattern_interval = 512;
    c.interval = 2048;
    let mut verifier = Verifier::new(c.clone(), 1, 42, false);
    let (buf, _) = written(&mut verifier, 4096, 8192);
    // Each 512 bytes from their start: the offset there, repeated.
    assert_eq!(&buf[1024..1032], &(8192u64 + 1024).to_le_bytes());
    assert_eq!(&buf[1528..1536], &(8192u64 + 1024).to_le_bytes());
    assert_eq!(&buf[1536..1544], &(8192u64 + 1536).to_le_bytes());
    let ok = verifier.check(&mut buf.clone(), 8192, Path::new("f"), Expected::default());
    assert!(ok.mismatches.is_empty(), "{:?}", ok.mismatches);
    // Read as one pattern for the request, the later intervals fail.
    c.pattern_interval = 0;
    let once = Verifier::new(c, 1, 42, false);
    let checked = once.check(&mut buf.clone(), 8192, Path::new("f"), Expected::default());
    assert_eq!(checked.mismatches.len(), 2);
    assert!(
        checked.mismatches[0]
            .detail
            .ends_with("bad pattern block offset 513"),
        "{}",
        checked.mismatches[0].detail
    );
}

#[test]
fn a_block_read_from_elsewhere_fails_on_its_offset() {
    let mut verifier = Verifier::new(config(VerifyKind::Crc32c), 1, 42, false);
    let (mut buf, _) = written(&mut verifier, 4096, 0);
    let checked = verifier.check(&mut buf, 4096, Path::new("f"), Expected::default());
    assert_eq!(checked.mismatches.len(), 1);
    assert_eq!(
        checked.mismatches[0].to_string(),
        "verify: bad header offset 0, wanted 4096 at file f offset 4096, length 4096 \
         (requested block: offset=4096, length=4096)"
    );
}

#[test]
fn a_moved_header_and_a_pattern_are_checked_too() {
    let mut with_pattern = config(VerifyKind::Pattern);
    with_pattern.pattern = Some(Pattern::parse("0xdeadbeef%o", true).unwrap());
    with_pattern.header_offset = 512;
    let mut verifier = Verifier::new(with_pattern, 1, 42, false);
    let (buf, _) = written(&mut verifier, 4096, 8192);
    assert_ne!(&buf[..2], &MAGIC.to_le_bytes(), "the header moved");
    assert_eq!(&buf[512..514], &MAGIC.to_le_bytes());
    let ok = verifier.check(&mut buf.clone(), 8192, Path::new("f"), Expected::default());
    assert!(ok.mismatches.is_empty(), "{:?}", ok.mismatches);
    let mut bad = buf.clone();
    bad[3000] ^= 1;
    let checked = verifier.check(&mut bad, 8192, Path::new("f"), Expected::default());
    assert_eq!(checked.mismatches[0].check, "pattern");
}

#[test]
fn fatal_stops_at_the_first_bad_block() {
    let mut fatal = config(VerifyKind::Md5);
    fatal.interval = 1024;
    fatal.fatal = true;
    let mut verifier = Verifier::new(fatal.clone(), 1, 1, false);
    let (mut buf, _) = written(&mut verifier, 4096, 0);
    for block in 0..4 {
        buf[block * 1024 + 900] ^= 1;
    }
    let all = Verifier::new(
        VerifyConfig {
            fatal: false,
            ..fatal
        },
        1,
        1,
        false,
    );
    assert_eq!(
        all.check(&mut buf.clone(), 0, Path::new("f"), Expected::default())
            .mismatches
            .len(),
        4
    );
    let first = verifier.check(&mut buf, 0, Path::new("f"), Expected::default());
    assert_eq!(first.mismatches.len(), 1);
}

#[test]
fn hexdump_prints_as_fio() {
    assert_eq!(hexdump(&[0xab]), "ab");
    assert_eq!(hexdump(&[0x34, 0x12]), "1234");
    assert_eq!(
        hexdump(&[0x78, 0x56, 0x34, 0x12, 1, 0, 0, 0]),
        "12345678 00000001 "
    );
}
