//! Trace readers: every format on a sample written byte for byte as the real
//! files are, compression, the native format, selection, and bad input.

use std::io::Write;

use proptest::prelude::*;
use wafer_core::request::Op;
use wafer_core::sim::TraceConfig;
use wafer_core::trace::{self, native, stats, Record, RecordSource, Selection, TextRecords};
use wafer_core::{DeviceConfig, Error, RunConfig, Simulation};

fn tmp(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("wafer-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

fn records(path: &str, format: &str) -> Vec<Record> {
    let mut r = TextRecords::open(path, format, false).unwrap();
    let mut out = Vec::new();
    while let Some(x) = r.next_record().unwrap() {
        out.push(x);
    }
    out
}

fn rec(time_ns: u64, device: u64, op: Op, offset: u64, size: u64) -> Record {
    Record {
        time_ns,
        device,
        op,
        offset,
        size,
    }
}

const MSR: &str = "128166372003061629,hm,0,Read,3154137088,4096,12527\r\n\
128166372016382155,hm,0,Write,3154137088,4096,1120\r\n\
128166372026382245,hm,1,Write,1229639680,32768,2102\r\n";

#[test]
fn msr() {
    let p = tmp("hm_0.csv", MSR.as_bytes());
    assert_eq!(
        records(&p, "msr"),
        vec![
            rec(12816637200306162900, 0, Op::Read, 3154137088, 4096),
            rec(12816637201638215500, 0, Op::Write, 3154137088, 4096),
            rec(12816637202638224500, 1, Op::Write, 1229639680, 32768),
        ]
    );
    assert_eq!(trace::detect(&p).unwrap(), "msr");
}

#[test]
fn alibaba() {
    let p = tmp("ali.csv", b"0,R,126703644672,4096,1577808000000069\n0,W,16449536,8192,1577808000000207\n3,W,2097152,4096,1577808000000333\n");
    assert_eq!(
        records(&p, "alibaba"),
        vec![
            rec(1577808000000069000, 0, Op::Read, 126703644672, 4096),
            rec(1577808000000207000, 0, Op::Write, 16449536, 8192),
            rec(1577808000000333000, 3, Op::Write, 2097152, 4096),
        ]
    );
    assert_eq!(trace::detect(&p).unwrap(), "alibaba");
}

#[test]
fn tencent() {
    let p = tmp(
        "tencent.csv",
        b"1538323200,1012232,8,1,1063\n1538323200,2312,16,0,1063\n1538323201,1012240,8,1,1064\n",
    );
    assert_eq!(
        records(&p, "tencent"),
        vec![
            rec(
                1_538_323_200_000_000_000,
                1063,
                Op::Write,
                1012232 * 512,
                4096
            ),
            rec(1_538_323_200_000_000_000, 1063, Op::Read, 2312 * 512, 8192),
            rec(
                1_538_323_201_000_000_000,
                1064,
                Op::Write,
                1012240 * 512,
                4096
            ),
        ]
    );
    assert_eq!(trace::detect(&p).unwrap(), "tencent");
}

#[test]
fn spc() {
    let p = tmp(
        "Financial1.spc",
        b"0,303567,3584,w,0.000000\n1,55590,3072,r,0.000000\n0,303574,512,W,0.026214\n",
    );
    assert_eq!(
        records(&p, "spc"),
        vec![
            rec(0, 0, Op::Write, 303567 * 512, 3584),
            rec(0, 1, Op::Read, 55590 * 512, 3072),
            rec(26_214_000, 0, Op::Write, 303574 * 512, 512),
        ]
    );
    assert_eq!(trace::detect(&p).unwrap(), "spc");
}

#[test]
fn fiu() {
    let p = tmp(
        "homes.blkparse",
        b"89966527613340 4 syslogd 904265560 8 W 6 0 531e779eb4ffbd9c5c4fad1f99bb73f6\n\
89966527622732 4 syslogd 904265568 8 W 6 0 f91b54c5e1ba1bc0cf1c3e4c3b12ba2c\n\
89966536103208 2977 hald-addon-stor 0 8 R 6 1 9b6d4b2e4a4e9f0a5cb8cd74e0c6d1e0\n",
    );
    let dev = 6u64 << 32;
    assert_eq!(
        records(&p, "fiu"),
        vec![
            rec(89966527613340, dev, Op::Write, 904265560 * 512, 4096),
            rec(89966527622732, dev, Op::Write, 904265568 * 512, 4096),
            rec(89966536103208, dev | 1, Op::Read, 0, 4096),
        ]
    );
    assert_eq!(trace::detect(&p).unwrap(), "fiu");
}

const BLKPARSE: &str = "  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [jbd2/sda3-8]
  8,0    3        2     0.000002185   697  G  WS 223490 + 8 [jbd2/sda3-8]
  8,0    3        3     0.000003132   697  P   N [jbd2/sda3-8]
  8,0    3        4     0.000006014   697  I  WS 223490 + 8 [jbd2/sda3-8]
  8,0    3        5     0.000008312   697  D  WS 223490 + 8 [jbd2/sda3-8]
  8,0    1        1     0.000210155     0  C  WS 223490 + 8 [0]
  8,0    2        1     0.001000000  1234  Q   R 1000 + 16 [cat]
  8,0    2        2     0.001100000  1234  D   R 1000 + 16 [cat]
  8,0    0        7     0.002000000    42  Q  DS 5000 + 2048 [fstrim]
  8,0    0        8     0.002100000    42  D  DS 5000 + 2048 [fstrim]
  8,0    0        9     0.003000000    42  Q FWS [kworker/0:1]
  8,0    3        6     0.003500000   697  U   N [jbd2/sda3-8] 1
CPU0 (8,0):
 Reads Queued:           1,        8KiB\t Writes Queued:           1,        4KiB
Total (8,0):
 Reads Completed:        1,        8KiB\t Writes Completed:        1,        4KiB
";

#[test]
fn blkparse_issue_and_queue_events() {
    let p = tmp("sda.txt", BLKPARSE.as_bytes());
    let dev = 8u64 << 32;
    assert_eq!(
        records(&p, "blkparse"),
        vec![
            rec(8_312, dev, Op::Write, 223490 * 512, 4096),
            rec(1_100_000, dev, Op::Read, 512_000, 8192),
            rec(2_100_000, dev, Op::Trim, 5000 * 512, 2048 * 512),
        ]
    );
    let q = records(&p, "blkparse:Q");
    assert_eq!(
        q.iter().map(|r| r.time_ns).collect::<Vec<_>>(),
        vec![0, 1_000_000, 2_000_000]
    );
    assert_eq!(trace::detect(&p).unwrap(), "blkparse");
}

#[test]
fn disksim_family() {
    let p = tmp(
        "fin1_ascii",
        b"4851300 1 524288 16 0\n4864300 1 524304 16 1\n",
    );
    let want = vec![
        rec(4851300, 1, Op::Write, 524288 * 512, 8192),
        rec(4864300, 1, Op::Read, 524304 * 512, 8192),
    ];
    assert_eq!(records(&p, "mqsim"), want);
    assert_eq!(records(&p, "ssdsim"), want);
    assert_eq!(trace::detect(&p).unwrap(), "mqsim");
    let p = tmp("disksim.trace", b"0.026214 0 303567 7 1\n1.5 2 8 8 0\n");
    assert_eq!(
        records(&p, "disksim"),
        vec![
            rec(26_214, 0, Op::Read, 303567 * 512, 7 * 512),
            rec(1_500_000, 2, Op::Write, 4096, 4096)
        ]
    );
    assert_eq!(trace::detect(&p).unwrap(), "disksim");
}

#[test]
fn gzip_xz_zstd_read_like_plain_text() {
    let plain = records(&tmp("plain.csv", MSR.as_bytes()), "msr");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(MSR.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 6);
    xz.write_all(MSR.as_bytes()).unwrap();
    let xz = xz.finish().unwrap();
    let zst = zstd::encode_all(MSR.as_bytes(), 3).unwrap();
    for (name, bytes) in [
        ("t.csv.gz", &gz),
        ("t.csv.xz", &xz),
        ("t.csv.zst", &zst),
        ("renamed.csv", &gz),
    ] {
        let p = tmp(name, bytes);
        assert_eq!(records(&p, "msr"), plain, "{name}");
        assert_eq!(trace::detect(&p).unwrap(), "msr", "{name}");
    }
    // A truncated archive is an error that says after which line reading stopped.
    let p = tmp("cut.csv.gz", &gz[..gz.len() - 12]);
    let mut r = TextRecords::open(&p, "msr", false).unwrap();
    let err = loop {
        match r.next_record() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("truncated gzip read to the end"),
            Err(e) => break e.to_string(),
        }
    };
    assert!(
        err.contains("cut.csv.gz") && err.contains("truncated or corrupt"),
        "{err}"
    );
    // With skip_bad, reading stops there and says so.
    let mut r = TextRecords::open(&p, "msr", true).unwrap();
    while r.next_record().unwrap().is_some() {}
    assert!(r.stats().truncated);
}

#[test]
fn malformed_lines_name_file_line_and_reason() {
    let cases: &[(&str, &[u8], &str, &str)] = &[
        ("msr", b"128166372003061629,hm,0,Write,3154137088,4096,1\n128166372003061630,hm,0,Erase,0,4096,1\n", ":2", "neither Read nor Write"),
        ("msr", b"1,hm,0,Write,-4096,4096,1\n", ":1", "negative offset"),
        ("msr", b"1,hm,0,Write,4096\n", ":1", "expected 7 fields"),
        ("alibaba", b"0,W,99999999999999999999,4096,1\n", ":1", "overflows 64 bits"),
        ("tencent", b"1,36028797018963968,8,1,1\n", ":1", "overflows"),
        ("spc", b"0,10,512,w,abc\n", ":1", "timestamp 'abc'"),
        ("fiu", b"1 2 p 10 8 X 6 0 md5\n", ":1", "neither R nor W"),
        ("blkparse", b"  8,0 1 1 0.5 9 D WS 100 - 8 [x]\n", ":1", "sector + nsectors"),
        ("mqsim", b"10 1 2 3 7\n", ":1", "neither 0 (write) nor 1 (read)"),
        ("msr", b"1,hm,0,Write,0,4096,1\n\xff\xfe,bad\n", ":2", "not UTF-8"),
    ];
    for (fmt, bytes, line, reason) in cases {
        let p = tmp("bad.trace", bytes);
        let mut r = TextRecords::open(&p, fmt, false).unwrap();
        let err = loop {
            match r.next_record() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("{fmt}: no error"),
                Err(e) => break e,
            }
        };
        let msg = err.to_string();
        assert!(matches!(err, Error::Trace { .. }), "{msg}");
        assert!(
            msg.contains(&format!("bad.trace{line}")) && msg.contains(reason),
            "{fmt}: {msg}"
        );
        // --skip-bad: the line is skipped and counted, the rest is read.
        let mut r = TextRecords::open(&p, fmt, true).unwrap();
        while r.next_record().unwrap().is_some() {}
        assert_eq!(r.stats().skipped_bad, 1, "{fmt}");
    }
}

#[test]
fn selection_and_defined_behaviours() {
    // device 0 and 1; a zero-size request; a timestamp that goes backwards.
    let text =
        "0,W,0,4096,1000000\n1,W,4096,4096,1000001\n0,W,8192,0,1000002\n0,R,8192,4096,2000000\n\
                0,W,16384,8192,1500000\n0,W,4096,4096,5000000\n";
    let p = tmp("sel.csv", text.as_bytes());
    let all = |sel: Selection| {
        let (mut s, fmt) = trace::open_selected(&p, None, &sel).unwrap();
        assert_eq!(fmt, "alibaba");
        let mut v = Vec::new();
        while let Some(r) = s.next_record().unwrap() {
            v.push(r);
        }
        (v, s.stats())
    };
    let (v, st) = all(Selection::default());
    assert_eq!(v.len(), 5);
    assert_eq!(st.zero_size, 1);
    assert_eq!(st.backwards_timestamps, 1);
    // times are relative to the first request; the backwards one is raised
    assert_eq!(
        v.iter().map(|r| r.time_ns).collect::<Vec<_>>(),
        vec![0, 1_000, 1_000_000_000, 1_000_000_000, 4_000_000_000]
    );
    let (v, st) = all(Selection {
        device: Some("0".into()),
        drop_reads: true,
        ..Default::default()
    });
    assert_eq!(
        v.iter().map(|r| r.offset).collect::<Vec<_>>(),
        vec![0, 16384, 4096]
    );
    assert_eq!(st.filtered, 2);
    let (v, _) = all(Selection {
        start_seconds: Some(0.5),
        end_seconds: Some(2.0),
        ..Default::default()
    });
    assert_eq!(v.len(), 2);
    assert_eq!(
        v[0].time_ns, 500_000_000,
        "times restart at the window's start"
    );
    let (v, _) = all(Selection {
        max_requests: Some(2),
        ..Default::default()
    });
    assert_eq!(v.len(), 2);
    // an empty file replays nothing
    let e = tmp("empty.csv", b"");
    let (mut s, _) = trace::open_selected(&e, Some("msr"), &Selection::default()).unwrap();
    assert_eq!(s.next_record().unwrap(), None);
    assert!(trace::detect(&e)
        .unwrap_err()
        .to_string()
        .contains("empty file"));
}

#[test]
fn native_round_trip_and_replay() {
    let p = tmp("conv.csv", MSR.as_bytes());
    let out = p.replace(".csv", ".arrow");
    let (mut s, fmt) = trace::open_selected(&p, None, &Selection::default()).unwrap();
    let st = native::write(&mut s, &out, &p, &fmt).unwrap();
    assert_eq!(st.requests, 3);
    assert_eq!(trace::detect(&out).unwrap(), "native");
    let text = {
        let (mut s, _) = trace::open_selected(&p, None, &Selection::default()).unwrap();
        std::iter::from_fn(|| s.next_record().unwrap()).collect::<Vec<_>>()
    };
    let nat = {
        let (mut s, _) = trace::open_selected(&out, None, &Selection::default()).unwrap();
        std::iter::from_fn(|| s.next_record().unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(text, nat);
    assert_eq!(
        nat[2].time_ns, 2_332_061_600,
        "relative ns: (…26382245 - …03061629) x 100"
    );
    // a file that is not a trace
    let junk = tmp("junk.arrow", b"ARROW1\0\0garbage");
    assert!(trace::open_selected(&junk, None, &Selection::default()).is_err());
}

fn trace_run(path: &str, address_space: bool) -> wafer_core::RunResult {
    let mut sim = Simulation::new(RunConfig {
        device: DeviceConfig {
            op: 0.5,
            segment_blocks: 4,
            ..Default::default()
        },
        trace: Some(TraceConfig {
            path: path.into(),
            address_space,
            capacity_from_trace: true,
            ..Default::default()
        }),
        writes: u64::MAX,
        ..Default::default()
    })
    .unwrap();
    sim.run().unwrap();
    sim.engine().check().unwrap();
    sim.result()
}

#[test]
fn replay_a_trace_sized_from_its_footprint() {
    // 200 writes cycling over 40 sparse 8 KiB extents, plus reads.
    let mut text = String::new();
    for i in 0..400u64 {
        let op = if i % 2 == 0 { "W" } else { "R" };
        text += &format!(
            "7,{op},{},8192,{}\n",
            (i % 40) * 1_048_576,
            1_000_000 + i * 10
        );
    }
    let p = tmp("rep.csv", text.as_bytes());
    let r = trace_run(&p, true);
    assert_eq!(r.user_writes, 200 * 2);
    assert_eq!(
        r.geometry.logical_blocks,
        39 * 256 + 2,
        "highest block touched + 1"
    );
    assert_eq!(r.trace_format.as_deref(), Some("alibaba"));
    assert_eq!(r.trace.unwrap().read.requests, 400);
    assert_eq!(r.counters.read_blocks, 200 * 2);
    let d = trace_run(&p, false);
    assert_eq!(
        d.geometry.logical_blocks,
        40 * 2,
        "dense: only the touched blocks"
    );
    assert_eq!(d.user_writes, r.user_writes);
}

#[test]
fn a_bad_line_stops_the_replay_after_the_lines_before_it() {
    let mut text = String::new();
    for i in 0..100u64 {
        text += &format!("0,W,{},4096,{}\n", (i % 10) * 4096, i);
    }
    text += "0,W,oops,4096,100\n";
    let p = tmp("stop.csv", text.as_bytes());
    let mut sim = Simulation::new(RunConfig {
        device: DeviceConfig {
            logical_blocks: 64,
            op: 0.5,
            segment_blocks: 4,
            ..Default::default()
        },
        trace: Some(TraceConfig {
            path: p,
            ..Default::default()
        }),
        writes: u64::MAX,
        ..Default::default()
    })
    .unwrap();
    let e = sim.run().unwrap_err().to_string();
    assert!(
        e.contains("stop.csv:101") && e.contains("offset 'oops'"),
        "{e}"
    );
    assert_eq!(
        sim.result().user_writes,
        100,
        "every request before the bad line was applied"
    );
}

#[test]
fn inspect_reports_the_papers_attributes() {
    // Writes to blocks 0..4 twice (sequentially), then block 0 again; one read.
    let text = "0,W,0,16384,0\n0,W,0,16384,1000000\n0,R,0,4096,2000000\n0,W,0,4096,4000000\n";
    let p = tmp("insp.csv", text.as_bytes());
    let (mut s, fmt) = trace::open_selected(&p, None, &Selection::default()).unwrap();
    let st = stats::compute(&mut s, &fmt, 4096, None).unwrap();
    assert_eq!((st.requests, st.reads, st.writes), (4, 1, 3));
    assert_eq!(st.write_blocks, 9);
    assert_eq!(
        (
            st.footprint_blocks,
            st.write_footprint_blocks,
            st.address_space_blocks
        ),
        (4, 4, 4)
    );
    assert_eq!(st.drive_writes, Some(9.0 / 4.0));
    // block intervals: 4 of 4 user blocks (first rewrite), 1 of 5 (block 0 again)
    assert_eq!(st.update_intervals.lower, vec![4]);
    assert_eq!(st.update_intervals.count, vec![5]);
    assert_eq!(st.never_overwritten_blocks, 4);
    assert_eq!(
        st.fios.random_write_ratio,
        Some(1.0),
        "each write restarts at 0, not at the previous end"
    );
    assert_eq!(
        st.fios.reuse_ratio,
        Some((16384.0 * 2.0 + 4096.0 * 2.0) / 16384.0)
    );
    assert!((st.fios.avg_write_kib.unwrap() - 12.0).abs() < 1e-9);
    assert!(
        (st.duration_seconds - 4.0).abs() < 1e-12,
        "alibaba timestamps are microseconds"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// No input makes a parser panic or hang.
    #[test]
    fn parsers_survive_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let line = String::from_utf8_lossy(&bytes);
        for f in trace::FORMATS {
            let p = (f.build)();
            let _ = p.parse(&line);
            let _ = p.looks_like(&line);
        }
    }

    /// Arbitrary files, text or not, read to an error or an end.
    #[test]
    fn readers_survive_arbitrary_files(bytes in prop::collection::vec(any::<u8>(), 0..2000), fmt in 0usize..9) {
        let p = tmp("fuzz.bin", &bytes);
        let name = trace::FORMATS[fmt].name;
        for skip in [false, true] {
            let mut r = TextRecords::open(&p, name, skip).unwrap();
            for _ in 0..10_000 {
                match r.next_record() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
        }
        let _ = trace::detect(&p);
    }
}

#[test]
fn a_sparse_address_space_beyond_the_limit_suggests_the_footprint() {
    // one write at 64 TiB: 2^34 blocks of 4 KiB
    let p = tmp("far.csv", b"0,W,70368744177664,4096,1\n0,W,0,4096,2\n");
    let cfg = |address_space| RunConfig {
        device: DeviceConfig {
            op: 4.0,
            segment_blocks: 1,
            ..Default::default()
        },
        trace: Some(TraceConfig {
            path: p.clone(),
            address_space,
            capacity_from_trace: true,
            ..Default::default()
        }),
        writes: u64::MAX,
        ..Default::default()
    };
    let e = Simulation::new(cfg(true))
        .err()
        .expect("too large")
        .to_string();
    assert!(e.contains("--address-space"), "{e}");
    let mut sim = Simulation::new(cfg(false)).unwrap();
    sim.run().unwrap();
    assert_eq!(sim.result().geometry.logical_blocks, 2);
}
