//! Trace readers: every format on a sample written byte for byte as the real
//! files are, compression, the native format, selection, and bad input.

use std::io::Write;

use proptest::prelude::*;
use wafer_core::request::Op;
use wafer_core::run::TraceConfig;
use wafer_core::trace::{
    self, native, stats, Reader, Record, RecordSource, Selection, TextRecords,
};
use wafer_core::{DeviceConfig, Error, RunConfig, Simulation};

/// The shared scratch folder, removed when dropped.
type TempDir = super::Scratch;

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
    let d = TempDir::new("traces");
    let p = d.file("hm_0.csv", MSR.as_bytes());
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
    let d = TempDir::new("traces");
    let p = d.file("ali.csv", b"0,R,126703644672,4096,1577808000000069\n0,W,16449536,8192,1577808000000207\n3,W,2097152,4096,1577808000000333\n");
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
    let d = TempDir::new("traces");
    let p = d.file(
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
    let d = TempDir::new("traces");
    let p = d.file(
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
    let d = TempDir::new("traces");
    let p = d.file(
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
    let d = TempDir::new("traces");
    let p = d.file("sda.txt", BLKPARSE.as_bytes());
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
    let d = TempDir::new("traces");
    let p = d.file(
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
    let p = d.file("disksim.trace", b"0.026214 0 303567 7 1\n1.5 2 8 8 0\n");
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
    let d = TempDir::new("traces");
    let plain = records(&d.file("plain.csv", MSR.as_bytes()), "msr");
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
        let p = d.file(name, bytes);
        assert_eq!(records(&p, "msr"), plain, "{name}");
        assert_eq!(trace::detect(&p).unwrap(), "msr", "{name}");
    }
    // A truncated archive is an error that says after which line reading stopped.
    let p = d.file("cut.csv.gz", &gz[..gz.len() - 12]);
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
    let d = TempDir::new("traces");
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
        let p = d.file("bad.trace", bytes);
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
        // --skip-bad: the line is skipped and counted, the rest is read; a
        // file whose every line was bad still says that nothing matched.
        let mut r = TextRecords::open(&p, fmt, true).unwrap();
        let mut n = 0;
        let end = loop {
            match r.next_record() {
                Ok(Some(_)) => n += 1,
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        assert_eq!(r.stats().skipped_bad, 1, "{fmt}");
        match end {
            None => assert!(n > 0, "{fmt}"),
            Some(e) => assert!(
                n == 0 && e.contains("none is a") && e.contains("1 skipped as malformed"),
                "{fmt}: {e}"
            ),
        }
    }
}

#[test]
fn an_overlong_line_is_named_never_read_whole() {
    let d = TempDir::new("traces");
    let good = b"1,hm,0,Write,0,4096,1\n";
    let mut bytes = good.to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 3 << 20));
    bytes.push(b'\n');
    bytes.extend_from_slice(good);
    let p = d.file("long.trace", &bytes);
    let mut r = TextRecords::open(&p, "msr", false).unwrap();
    assert!(r.next_record().unwrap().is_some());
    let msg = r.next_record().unwrap_err().to_string();
    assert!(
        msg.contains("long.trace:2") && msg.contains("without a line break"),
        "{msg}"
    );
    // --skip-bad: the line is skipped whole, the next one read.
    let mut r = TextRecords::open(&p, "msr", true).unwrap();
    let mut n = 0;
    while r.next_record().unwrap().is_some() {
        n += 1;
    }
    assert_eq!((n, r.stats().skipped_bad, r.stats().lines), (2, 1, 3));
}

#[test]
fn selection_and_defined_behaviours() {
    let d = TempDir::new("traces");
    // device 0 and 1; a zero-size request; a timestamp that goes backwards.
    let text =
        "0,W,0,4096,1000000\n1,W,4096,4096,1000001\n0,W,8192,0,1000002\n0,R,8192,4096,2000000\n\
                0,W,16384,8192,1500000\n0,W,4096,4096,5000000\n";
    let p = d.file("sel.csv", text.as_bytes());
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
    let e = d.file("empty.csv", b"");
    let (mut s, _) = trace::open_selected(&e, Some("msr"), &Selection::default()).unwrap();
    assert_eq!(s.next_record().unwrap(), None);
    assert!(trace::detect(&e)
        .unwrap_err()
        .to_string()
        .contains("empty file"));
}

#[test]
fn native_round_trip_and_replay() {
    let d = TempDir::new("traces");
    let p = d.file("conv.csv", MSR.as_bytes());
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
    let junk = d.file("junk.arrow", b"ARROW1\0\0garbage");
    assert!(trace::open_selected(&junk, None, &Selection::default()).is_err());
}

#[test]
fn a_native_trace_changed_after_conversion_is_refused_on_open() {
    // Issue 42: `traces convert` writes a checksum of the rows in the
    // file's footer; a row changed since is an error naming the file.
    let d = TempDir::new("traces");
    let rows: Vec<Record> = (0..3000u64)
        .map(|i| rec(i * 1000, 0, Op::Write, (i * 7 % 500) * 4096, 4096))
        .collect();
    let out = d.path().join("rows.arrow").display().to_string();
    let mut it = rows.clone().into_iter();
    native::write_records(|| Ok(it.next()), &out, "test", "msr").unwrap();
    let read = |p: &str| -> wafer_core::Result<Vec<Record>> {
        let (mut s, _) = trace::open_selected(p, None, &Selection::default())?;
        std::iter::from_fn(|| s.next_record().transpose()).collect()
    };
    assert_eq!(read(&out).unwrap(), rows);
    assert_eq!(
        read(&out).unwrap(),
        rows,
        "a second open (verified once) reads the same"
    );
    // One row's offset changed in place (the file's size kept): its
    // little-endian bytes appear once among the offset column's values.
    let bytes = std::fs::read(&out).unwrap();
    let needle = (1234u64 * 7 % 500 * 4096).to_le_bytes();
    let target = (1234u64 * 7 % 500 * 4096 + 512).to_le_bytes();
    let at = bytes
        .windows(8)
        .position(|w| w == needle)
        .expect("the value is in the file");
    let mut edited = bytes.clone();
    edited[at..at + 8].copy_from_slice(&target);
    let bad = d.path().join("edited.arrow").display().to_string();
    std::fs::write(&bad, &edited).unwrap();
    let e = read(&bad).expect_err("an edited native trace is refused");
    assert!(
        matches!(&e, Error::Trace { .. })
            && e.to_string().contains("edited.arrow")
            && e.to_string().contains("corrupt"),
        "{e}"
    );
    // The same edit made in place, right after a verified open: the file
    // keeps its path, size and (within the file system's tick) its
    // modification time, so only never remembering a freshly written file
    // catches it.
    std::fs::write(&out, &edited).unwrap();
    assert!(read(&out).is_err(), "an in-place edit is verified again");
    std::fs::write(&out, &bytes).unwrap();
    // A damaged checksum key does not pass the file off as another tool's.
    let key = bytes
        .windows(15)
        .position(|w| w == b"wafer.rows_xxh3")
        .expect("the key is in the footer");
    let mut renamed = bytes.clone();
    renamed[key + 14] ^= 1;
    let nokey = d.path().join("nokey.arrow").display().to_string();
    std::fs::write(&nokey, &renamed).unwrap();
    let e = read(&nokey).expect_err("a wafer file without its checksum is refused");
    assert!(
        e.to_string().contains("no `wafer.rows_xxh3` checksum"),
        "{e}"
    );
    // A file another tool wrote (the columns, no checksum) still reads.
    let plain = d.path().join("plain.arrow").display().to_string();
    {
        use arrow_array::{ArrayRef, RecordBatch, UInt64Array, UInt8Array};
        use arrow_schema::{DataType, Field, Schema};
        use std::sync::Arc;
        let schema = Arc::new(Schema::new(vec![
            Field::new("time_ns", DataType::UInt64, false),
            Field::new("device", DataType::UInt64, false),
            Field::new("op", DataType::UInt8, false),
            Field::new("offset", DataType::UInt64, false),
            Field::new("size", DataType::UInt64, false),
        ]));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from(vec![0, 10])),
            Arc::new(UInt64Array::from(vec![0, 0])),
            Arc::new(UInt8Array::from(vec![1, 1])),
            Arc::new(UInt64Array::from(vec![0, 4096])),
            Arc::new(UInt64Array::from(vec![4096, 4096])),
        ];
        let f = std::fs::File::create(&plain).unwrap();
        let mut w = arrow_ipc::writer::FileWriter::try_new(f, &schema).unwrap();
        w.write(&RecordBatch::try_new(schema.clone(), cols).unwrap())
            .unwrap();
        w.finish().unwrap();
    }
    assert_eq!(read(&plain).unwrap().len(), 2);
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
    let d = TempDir::new("traces");
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
    let p = d.file("rep.csv", text.as_bytes());
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
    let d = TempDir::new("traces");
    let mut text = String::new();
    for i in 0..100u64 {
        text += &format!("0,W,{},4096,{}\n", (i % 10) * 4096, i);
    }
    text += "0,W,oops,4096,100\n";
    let p = d.file("stop.csv", text.as_bytes());
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
    let d = TempDir::new("traces");
    // Writes to blocks 0..4 twice (sequentially), then block 0 again; one read.
    let text = "0,W,0,16384,0\n0,W,0,16384,1000000\n0,R,0,4096,2000000\n0,W,0,4096,4000000\n";
    let p = d.file("insp.csv", text.as_bytes());
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

/// Fuzz cases per property: 256 in the test suite, more on demand
/// (`WAFER_FUZZ_CASES=100000 cargo test --test integration survive`; the
/// census, docs/RELIABILITY.md).
fn fuzz_cases() -> u32 {
    std::env::var("WAFER_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: fuzz_cases(), ..ProptestConfig::default() })]

    /// A native (Arrow) trace with bytes flipped anywhere reads to an error
    /// or to the same records (its checksum), never a panic or other rows.
    #[test]
    fn native_survives_flipped_bytes(flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..6)) {
        let d = TempDir::new("traces");
        let rows: Vec<Record> = (0..300u64)
            .map(|i| rec(i * 1000, 0, if i % 3 == 0 { Op::Read } else { Op::Write }, (i * 7 % 50) * 4096, 4096))
            .collect();
        let out = d.path().join("rows.arrow").display().to_string();
        let mut it = rows.clone().into_iter();
        native::write_records(|| Ok(it.next()), &out, "test", "msr").unwrap();
        let mut bytes = std::fs::read(&out).unwrap();
        for (at, x) in &flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        std::fs::write(&out, &bytes).unwrap();
        let read = (|| -> wafer_core::Result<Vec<Record>> {
            let (mut s, _) = trace::open_selected(&out, None, &Selection::default())?;
            std::iter::from_fn(|| s.next_record().transpose()).collect()
        })();
        if let Ok(v) = read {
            prop_assert_eq!(v, rows);
        }
    }

    /// No input makes a parser panic or hang.
    #[test]
    fn parsers_survive_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let line = String::from_utf8_lossy(&bytes);
        for f in trace::FORMATS {
            if let Reader::Text(build) = f.reader {
                let p = build();
                let _ = p.parse(&line);
                let _ = p.looks_like(&line);
            }
        }
    }

    /// Arbitrary files, text or not, read to an error or an end.
    #[test]
    fn readers_survive_arbitrary_files(bytes in prop::collection::vec(any::<u8>(), 0..2000), fmt in 0usize..64) {
        let d = TempDir::new("traces");
        let p = d.file("fuzz.bin", &bytes);
        let text: Vec<&str> = trace::FORMATS
            .iter()
            .filter(|f| matches!(f.reader, Reader::Text(_)))
            .map(|f| f.name)
            .collect();
        let name = text[fmt % text.len()];
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

    /// Arbitrary bytes after a blktrace magic read to an error or an end.
    #[test]
    fn blktrace_survives_arbitrary_events(bytes in prop::collection::vec(any::<u8>(), 0..2000), big in any::<bool>()) {
        let d = TempDir::new("traces");
        let mut data = if big { 0x6561_7407u32.to_be_bytes() } else { 0x6561_7407u32.to_le_bytes() }.to_vec();
        data.extend_from_slice(&bytes);
        let p = d.file("fuzz.blktrace.0", &data);
        prop_assert_eq!(trace::detect(&p).unwrap(), "blktrace");
        for skip in [false, true] {
            let (mut s, _) = trace::open_selected(&p, Some("blktrace"), &Selection { skip_bad: skip, ..Default::default() }).unwrap();
            for _ in 0..10_000 {
                match s.next_record() {
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
        }
    }
}

#[test]
fn a_sparse_address_space_beyond_the_limit_suggests_the_footprint() {
    let d = TempDir::new("traces");
    // one write at 64 TiB: 2^34 blocks of 4 KiB
    let p = d.file("far.csv", b"0,W,70368744177664,4096,1\n0,W,0,4096,2\n");
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

/// Every record of `path` read as `format` through the selection layer
/// (works for binary formats too).
fn selected(path: &str, format: &str, sel: &Selection) -> Vec<Record> {
    let (mut s, _) = trace::open_selected(path, Some(format), sel).unwrap();
    std::iter::from_fn(|| s.next_record().unwrap()).collect()
}

/// The error that reading `path` as `format` ends with.
fn read_error(path: &str, format: &str) -> String {
    let mut r = TextRecords::open(path, format, false).unwrap();
    loop {
        match r.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("{format}: read {path} without error"),
            Err(e) => break e.to_string(),
        }
    }
}

/// The MSR-style replayer cut of the issue: byte offsets and sizes.
const MSR_CUT: &str = "0.000 0 4923392 4096 1\n0.091 0 13873152 4096 1\n\
0.652 0 27348992 65536 0\n1.205 1 75415552 8192 0\n";

#[test]
fn msr_cut_is_read_in_bytes_never_as_disksim_sectors() {
    let d = TempDir::new("traces");
    let p = d.file("tencent.cut.trace", MSR_CUT.as_bytes());
    assert_eq!(
        records(&p, "msr-cut"),
        vec![
            rec(0, 0, Op::Read, 4923392, 4096),
            rec(91_000, 0, Op::Read, 13873152, 4096),
            rec(652_000, 0, Op::Write, 27348992, 65536),
            rec(1_205_000, 1, Op::Write, 75415552, 8192),
        ]
    );
    assert_eq!(trace::detect(&p).unwrap(), "msr-cut");
    // what the old detector picked: 512 times the offsets, a 7 TiB device
    assert_eq!(records(&p, "disksim")[2].size, 65536 * 512);
    // replayed by its address space: the device is the bytes the cut addresses
    let r = trace_run(&p, true);
    assert_eq!(r.trace_format.as_deref(), Some("msr-cut"));
    assert_eq!(r.geometry.logical_blocks, (75415552 + 8192) / 4096);
    assert_eq!(r.user_writes, 16 + 2);
    // integer milliseconds: not mqsim's nanoseconds and sectors either
    let p = d.file(
        "int.trace",
        b"0 0 4923392 4096 1\n91 0 13873152 4096 1\n652 0 27348992 65536 0\n",
    );
    assert_eq!(trace::detect(&p).unwrap(), "msr-cut");
}

#[test]
fn flashnet_replayed_trace() {
    let d = TempDir::new("traces");
    let p = d.file(
        "tencent.cut.per_50k.rw_60_40.490.trace",
        b"0.000,120,1,4096,4923392,0.091,4096\n0.000,45,0,4096,27348992,0.602,4096\n\
0.000,81,0,57344,71962624,0.659,57344\n1000.000,1075,1,4096,282624,1000.070,4096\n",
    );
    assert_eq!(
        records(&p, "flashnet"),
        vec![
            rec(0, 0, Op::Read, 4923392, 4096),
            rec(0, 0, Op::Write, 27348992, 4096),
            rec(0, 0, Op::Write, 71962624, 57344),
            rec(1_000_000_000, 0, Op::Read, 282624, 4096),
        ]
    );
    assert_eq!(trace::detect(&p).unwrap(), "flashnet");
}

#[test]
fn vscsi_cloudphysics_cut() {
    let d = TempDir::new("traces");
    let p = d.file(
        "cloudPhysicsIO.csv",
        b"version,time,op,size,lbn\n1,33898,2a,512,42932745\n1,33898,12,36,0\n\
1,33899,28,6144,31954535\n1,33899,2A,57344,6238199\n",
    );
    assert_eq!(
        records(&p, "vscsi"),
        vec![
            rec(33_898_000_000_000, 0, Op::Write, 42932745 * 512, 512),
            rec(33_899_000_000_000, 0, Op::Read, 31954535 * 512, 6144),
            rec(33_899_000_000_000, 0, Op::Write, 6238199 * 512, 57344),
        ],
        "INQUIRY (0x12) moves no data"
    );
    assert_eq!(trace::detect(&p).unwrap(), "vscsi");
}

const WISCSEE: &str = "29162 D read 299008 4096 0.000000000 0 False\n\
29162 C read 299008 4096 0.000223461 0.000223461 False\n\
440 D write 12912640 524288 0.004100000 0.003876539 True\n\
440 D discard 16777216 1048576 0.005000000 0.0009 False\n";

#[test]
fn wiscsee_events() {
    let d = TempDir::new("traces");
    let p = d.file("blkparse-events-for-ftlsim.txt", WISCSEE.as_bytes());
    let want = vec![
        rec(0, 0, Op::Read, 299008, 4096),
        rec(4_100_000, 0, Op::Write, 12912640, 524288),
        rec(5_000_000, 0, Op::Trim, 16777216, 1048576),
    ];
    assert_eq!(records(&p, "wiscsee"), want, "issue (D) events only");
    assert_eq!(trace::detect(&p).unwrap(), "wiscsee");
    // the earlier layout without the action column
    let old = d.file(
        "old-events.txt",
        b"29162 read 299008 4096 0.000000000 0 False\n440 write 12912640 524288 0.0041 NA True\n",
    );
    assert_eq!(records(&old, "wiscsee"), want[..2]);
    assert_eq!(trace::detect(&old).unwrap(), "wiscsee");
}

#[test]
fn a_format_that_matches_no_line_is_an_error_not_zero_requests() {
    let d = TempDir::new("traces");
    let p = d.file("blkparse-events-for-ftlsim.txt", WISCSEE.as_bytes());
    let e = read_error(&p, "blkparse");
    assert!(
        e.contains("blkparse-events-for-ftlsim.txt")
            && e.contains("4 lines read")
            && e.contains("none is a 'blkparse' request"),
        "{e}"
    );
    // through the selection layer as a replay reads it
    let (mut s, _) = trace::open_selected(&p, Some("blkparse"), &Selection::default()).unwrap();
    assert!(s.next_record().is_err());
    // blank and comment lines alone are still an empty trace
    let c = d.file("comments.csv", b"# nothing yet\n\n   \n");
    assert!(records(&c, "msr").is_empty());
}

#[test]
fn csv_with_a_column_map() {
    let d = TempDir::new("traces");
    let p = d.file(
        "custom.tsv",
        b"volume\tlba\tblocks\tkind\tusec\n7\t100\t8\tWRITE\t1000\n7\t164\t16\tread\t1500.5\n\
9\t0\t8\tflush\t1600\n",
    );
    let map = "csv:time=4,op=3,offset=1,size=2,device=0,sep=tab,time_unit=us,\
offset_unit=sector,size_unit=sector,skip=flush";
    // the header line has no numbers: skipped by header=auto
    assert_eq!(
        records(&p, map),
        vec![
            rec(1_000_000, 7, Op::Write, 51200, 4096),
            rec(1_500_500, 7, Op::Read, 164 * 512, 8192),
        ]
    );
    // numeric op codes must be spelled out
    let n = d.file("numeric.csv", b"0,1,0,4096\n1,0,4096,4096\n");
    let e = read_error(&n, "csv:time=0,op=1,offset=2,size=3");
    assert!(
        e.contains("numeric.csv:1") && e.contains("read=... and write="),
        "{e}"
    );
    assert_eq!(
        records(
            &n,
            "csv:time=0,op=1,offset=2,size=3,time_unit=s,read=0,write=1"
        )[1],
        rec(1_000_000_000, 0, Op::Read, 4096, 4096)
    );
    // bad maps name the key and list the keys
    for (spec, want) in [
        (
            "csv:time=0,op=1,offset=2,size=3,unit=4",
            "unknown key 'unit'; keys: time, op, offset, size, device, sep",
        ),
        ("csv:time=0,op=1,size=3", "missing column offset"),
        ("csv:time=0,op=1,offset=2,size=3,sep=colon", "sep=colon"),
        ("csv", "csv needs a column map"),
    ] {
        let e = TextRecords::open(&p, spec, false)
            .err()
            .expect(spec)
            .to_string();
        assert!(e.contains(want), "{spec}: {e}");
    }
    let listed: Vec<&str> = trace::FORMATS.iter().map(|f| f.name).collect();
    assert!(listed.contains(&"csv:KEYS"));
}

#[test]
fn detection_names_every_layout_and_refuses_to_guess() {
    let d = TempDir::new("traces");
    let cases: &[(&str, &[u8])] = &[
        ("msr", MSR.as_bytes()),
        (
            "alibaba",
            b"0,R,126703644672,4096,1577808000000069\n0,W,16449536,8192,1577808000000207\n",
        ),
        (
            "tencent",
            b"1538323200,1012232,8,1,1063\n1538323200,2312,16,0,1063\n",
        ),
        (
            "spc",
            b"0,303567,3584,w,0.000000\n1,55590,3072,r,0.000000\n",
        ),
        (
            "fiu",
            b"89966527613340 4 syslogd 904265560 8 W 6 0 531e779eb4ffbd9c5c4fad1f99bb73f6\n",
        ),
        ("blkparse", BLKPARSE.as_bytes()),
        ("mqsim", b"4851300 1 524288 16 0\n4864300 1 524304 16 1\n"),
        ("disksim", b"0.026214 0 303567 7 1\n1.5 2 8 8 0\n"),
        ("msr-cut", MSR_CUT.as_bytes()),
        ("flashnet", b"0.000,120,1,4096,4923392,0.091,4096\n"),
        (
            "vscsi",
            b"1,33898,2a,512,42932745\n1,33899,28,6144,31954535\n",
        ),
        ("wiscsee", WISCSEE.as_bytes()),
    ];
    for (want, bytes) in cases {
        let p = d.file(&format!("{want}.trace"), bytes);
        assert_eq!(trace::detect(&p).unwrap(), *want);
    }
    // byte sizes of 512..1024 read as plausibly as DiskSim sectors of 256..512 KiB:
    // no guess, but the candidates, their scores and --format
    let p = d.file(
        "small.trace",
        b"0.5 0 0 512 1\n1.5 0 1024 1024 0\n2.5 0 4096 512 1\n",
    );
    let e = trace::detect(&p).unwrap_err().to_string();
    assert!(
        e.contains("ambiguous")
            && e.contains("--format disksim (score 1.00)")
            && e.contains("--format msr-cut (score 0.9")
            && e.contains("--format"),
        "{e}"
    );
    // a layout without a reader
    let p = d.file("odd.trace", b"alpha beta gamma\ndelta epsilon\n");
    let e = trace::detect(&p).unwrap_err().to_string();
    assert!(
        e.contains("no reader for this layout")
            && e.contains("'alpha beta gamma'")
            && e.contains("msr-cut")
            && e.contains("--format csv:time=0"),
        "{e}"
    );
}

#[test]
fn a_binary_file_is_not_a_text_trace() {
    let d = TempDir::new("traces");
    let mut junk = b"8,0 1 1 0.1 9 D W 8 + 8\n".to_vec();
    junk.extend_from_slice(&[0x00, 0x9f, 0x92, 0x96, 0xff, 0x00, 0x01]);
    let p = d.file("junk.bin", &junk);
    let e = trace::detect(&p).unwrap_err().to_string();
    assert!(
        e.contains("not a text trace (binary data at byte 24)")
            && e.contains("--format")
            && !e.contains("empty"),
        "{e}"
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&junk).unwrap();
    let p = d.file("junk.bin.gz", gz.finish().unwrap());
    assert!(trace::detect(&p)
        .unwrap_err()
        .to_string()
        .contains("not a text trace"));
    // a truly empty file keeps its message
    let p = d.file("empty", b"");
    assert!(trace::detect(&p)
        .unwrap_err()
        .to_string()
        .contains("empty file"));
    // a tar archive of something else: its text, which no reader takes
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(5);
    b.append_data(&mut h, "notes.txt", &b"hello"[..]).unwrap();
    let p = d.file("other.tar", b.into_inner().unwrap());
    let e = trace::detect(&p).unwrap_err().to_string();
    assert!(
        e.contains("no reader for this layout: first line 'hello'"),
        "{e}"
    );
}

/// `struct blk_io_trace` categories and actions (include/uapi/linux/blktrace_api.h).
const TC_READ: u32 = 1 << 0;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_SYNC: u32 = 1 << 3;
const TC_QUEUE: u32 = 1 << 4;
const TC_ISSUE: u32 = 1 << 6;
const TC_COMPLETE: u32 = 1 << 7;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;
const TA_QUEUE: u32 = 1;
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;
const TN_PROCESS: u32 = 0;
const TN_TIMESTAMP: u32 = 1;

/// One event as the kernel writes it: 48 bytes in the host's byte order,
/// then the payload.
#[allow(clippy::too_many_arguments)]
fn bt_event(
    big: bool,
    cpu: u32,
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    dev: u32,
    pdu: &[u8],
) -> Vec<u8> {
    let mut v = Vec::with_capacity(48 + pdu.len());
    let w32 = |v: &mut Vec<u8>, x: u32| {
        v.extend(if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    let w64 = |v: &mut Vec<u8>, x: u64| {
        v.extend(if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    let w16 = |v: &mut Vec<u8>, x: u16| {
        v.extend(if big {
            x.to_be_bytes()
        } else {
            x.to_le_bytes()
        })
    };
    w32(&mut v, 0x6561_7400 | 7); // magic | version
    w32(&mut v, 1); // sequence
    w64(&mut v, time);
    w64(&mut v, sector);
    w32(&mut v, bytes);
    w32(&mut v, action);
    w32(&mut v, 4242); // pid
    w32(&mut v, dev);
    w32(&mut v, cpu);
    w16(&mut v, 0); // error
    w16(&mut v, pdu.len() as u16);
    v.extend_from_slice(pdu);
    v
}

/// sda: major 8, minor 0, in the kernel's dev_t encoding.
const SDA: u32 = 8 << 20;

/// The events of one CPU: a process name, a queued and issued write, a
/// timestamp notification, a flush, a read, a discard and a completion.
fn cpu_events(big: bool, cpu: u32, t0: u64, sector: u64) -> Vec<u8> {
    let act = |a: u32, tc: u32| a | tc << 16;
    let mut v = Vec::new();
    v.extend(bt_event(
        big,
        cpu,
        t0,
        0,
        0,
        act(TN_PROCESS, TC_NOTIFY),
        SDA,
        b"kworker/0:1\0",
    ));
    v.extend(bt_event(
        big,
        cpu,
        t0 + 10,
        sector,
        4096,
        act(TA_QUEUE, TC_WRITE | TC_SYNC | TC_QUEUE),
        SDA,
        b"",
    ));
    v.extend(bt_event(
        big,
        cpu,
        t0 + 20,
        sector,
        4096,
        act(TA_ISSUE, TC_WRITE | TC_SYNC | TC_ISSUE),
        SDA,
        b"",
    ));
    v.extend(bt_event(
        big,
        cpu,
        t0 + 25,
        0,
        0,
        act(TN_TIMESTAMP, TC_NOTIFY),
        SDA,
        &[0u8; 16],
    ));
    v.extend(bt_event(
        big,
        cpu,
        t0 + 30,
        0,
        0,
        act(TA_ISSUE, TC_WRITE | TC_FLUSH | TC_ISSUE),
        SDA,
        b"",
    ));
    v.extend(bt_event(
        big,
        cpu,
        t0 + 40,
        sector + 64,
        8192,
        act(TA_ISSUE, TC_READ | TC_ISSUE),
        SDA,
        b"",
    ));
    v.extend(bt_event(
        big,
        cpu,
        t0 + 50,
        2048,
        1 << 20,
        act(TA_ISSUE, TC_WRITE | TC_DISCARD | TC_ISSUE),
        SDA | 1,
        b"",
    ));
    v.extend(bt_event(
        big,
        cpu,
        t0 + 60,
        sector,
        4096,
        act(TA_COMPLETE, TC_WRITE | TC_COMPLETE),
        SDA,
        b"",
    ));
    v
}

/// What [`cpu_events`] holds as issue records.
fn cpu_records(t0: u64, sector: u64) -> Vec<Record> {
    vec![
        rec(t0 + 20, 8 << 32, Op::Write, sector * 512, 4096),
        rec(t0 + 40, 8 << 32, Op::Read, (sector + 64) * 512, 8192),
        rec(t0 + 50, 8 << 32 | 1, Op::Trim, 2048 * 512, 1 << 20),
    ]
}

/// Records with times relative to the first, as the selection layer gives them.
fn relative(mut v: Vec<Record>) -> Vec<Record> {
    let t0 = v.first().map_or(0, |r| r.time_ns);
    for r in &mut v {
        r.time_ns -= t0;
    }
    v
}

#[test]
fn blktrace_binary_in_both_byte_orders() {
    let d = TempDir::new("traces");
    for big in [false, true] {
        let p = d.file("sda.blktrace.0", cpu_events(big, 0, 1_000, 100));
        assert_eq!(trace::detect(&p).unwrap(), "blktrace");
        let all = Selection::default();
        assert_eq!(
            selected(&p, "blktrace", &all),
            relative(cpu_records(1_000, 100)),
            "big endian: {big}"
        );
        assert_eq!(
            selected(&p, "blktrace:D", &all),
            selected(&p, "blktrace", &all)
        );
        let q = selected(&p, "blktrace:Q", &all);
        assert_eq!(
            q,
            vec![rec(0, 8 << 32, Op::Write, 100 * 512, 4096)],
            "not the timestamp notification"
        );
        // --device MAJ,MIN as for blkparse
        let sda1 = Selection {
            device: Some("8,1".into()),
            ..Default::default()
        };
        assert_eq!(selected(&p, "blktrace", &sda1).len(), 1);
    }
    // compressed
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&cpu_events(false, 0, 1_000, 100)).unwrap();
    let p = d.file("sda.blktrace.0.gz", gz.finish().unwrap());
    assert_eq!(trace::detect(&p).unwrap(), "blktrace");
    assert_eq!(selected(&p, "blktrace", &Selection::default()).len(), 3);
}

#[test]
fn blktrace_per_cpu_files_and_tarballs_merge_by_time() {
    let d = TempDir::new("traces");
    let cpu0 = cpu_events(false, 0, 1_000, 100);
    let cpu1 = cpu_events(false, 1, 1_005, 5_000);
    d.file("sda.blktrace.0", &cpu0);
    d.file("sda.blktrace.1", &cpu1);
    d.file("sda.blktrace.2", b""); // an idle CPU
    d.file("sda.blkparse.txt", b"not a per-CPU file\n");
    let mut want: Vec<Record> = cpu_records(1_000, 100)
        .into_iter()
        .chain(cpu_records(1_005, 5_000))
        .collect();
    want.sort_by_key(|r| r.time_ns);
    let want = relative(want);
    let base = d.join("sda");
    assert_eq!(trace::detect(&base).unwrap(), "blktrace");
    assert_eq!(selected(&base, "blktrace", &Selection::default()), want);
    // a tarball of them, plain and gzipped
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in [
        ("trace/sda.blktrace.0", &cpu0),
        ("trace/sda.blktrace.1", &cpu1),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        b.append_data(&mut h, name, &data[..]).unwrap();
    }
    let tarball = b.into_inner().unwrap();
    let t = d.file("sda-trace.tar", &tarball);
    assert_eq!(trace::detect(&t).unwrap(), "blktrace");
    assert_eq!(selected(&t, "blktrace", &Selection::default()), want);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tarball).unwrap();
    let tgz = d.file("sda-trace.tar.gz", gz.finish().unwrap());
    assert_eq!(trace::detect(&tgz).unwrap(), "blktrace");
    assert_eq!(selected(&tgz, "blktrace", &Selection::default()), want);
    // a replay of the base name
    let r = trace_run(&base, false);
    assert_eq!(r.trace_format.as_deref(), Some("blktrace"));
    // sector 100 is not 4 KiB aligned: its 4 KiB write spans 2 blocks, its
    // 8 KiB read at sector 164 spans 3
    assert_eq!((r.user_writes, r.counters.read_blocks), (2 + 1, 3 + 2));
    // a missing base name says what it looked for
    let e = trace::detect(&d.join("sdb")).unwrap_err().to_string();
    assert!(
        e.contains("no such file") && e.contains(".blktrace.N"),
        "{e}"
    );
}

#[test]
fn blktrace_bad_input_is_an_error_that_says_where() {
    let d = TempDir::new("traces");
    let good = cpu_events(false, 0, 1_000, 100);
    let open_err = |p: &str,
                    format: &str,
                    skip_bad: bool|
     -> (Vec<Record>, Option<String>, trace::ReadStats) {
        let sel = Selection {
            skip_bad,
            ..Default::default()
        };
        let (mut s, _) = trace::open_selected(p, Some(format), &sel).unwrap();
        let mut v = Vec::new();
        let e = loop {
            match s.next_record() {
                Ok(Some(r)) => v.push(r),
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        (v, e, s.stats())
    };
    // cut in the middle of an event
    let p = d.file("cut.blktrace.0", &good[..good.len() - 10]);
    let (v, e, _) = open_err(&p, "blktrace", false);
    assert_eq!(v.len(), 3, "the events before the cut are kept");
    let e = e.unwrap();
    assert!(
        e.contains("cut.blktrace.0") && e.contains("truncated event at byte"),
        "{e}"
    );
    let (_, e, st) = open_err(&p, "blktrace", true);
    assert!(e.is_none() && st.truncated);
    // garbage after the first events
    let mut bad = good.clone();
    bad.extend_from_slice(&[0x55; 48]);
    let p = d.file("bad.blktrace.0", &bad);
    let e = open_err(&p, "blktrace", false).1.unwrap();
    assert!(e.contains("no blktrace magic at byte"), "{e}");
    // traced with -a queue: no issue event at all
    let act = TA_QUEUE | (TC_WRITE | TC_QUEUE) << 16;
    let q = d.file(
        "q.blktrace.0",
        bt_event(false, 0, 5, 8, 4096, act, SDA, b""),
    );
    let e = open_err(&q, "blktrace", false).1.unwrap();
    assert!(
        e.contains("1 blktrace events read, none is a 'D' event") && e.contains("blktrace:Q"),
        "{e}"
    );
    // another version of the struct
    let mut v8 = bt_event(false, 0, 5, 8, 4096, act, SDA, b"");
    v8[0] = 8;
    let p = d.file("v8.blktrace.0", &v8);
    assert!(open_err(&p, "blktrace", false)
        .1
        .unwrap()
        .contains("version 8"));
}

/// A CloudPhysics vscsi CSV as the binary records' microseconds give it:
/// READ(10) 0x28, WRITE(10) 0x2a, READ(16) 0x88, WRITE(16) 0x8a.
fn vscsi_micros(n: u64, t0: u64) -> String {
    let mut s = String::from("version,time,op,size,lbn\n");
    for i in 0..n {
        let op = ["28", "2a", "88", "0x8a"][(i % 4) as usize];
        s += &format!("2,{},{op},4096,{}\n", t0 + i * 350, (i * 7919 % 1000) * 8);
    }
    s
}

#[test]
fn cloudphysics_microseconds_are_detected_and_read() {
    let d = TempDir::new("traces");
    // microseconds since the trace began, hours in: as seconds they overflow
    let p = d.file("cloudphysics_us.csv", vscsi_micros(300, 33_898_000_000));
    assert_eq!(trace::detect(&p).unwrap(), "vscsi-us");
    let r = records(&p, "vscsi-us");
    assert_eq!(r.len(), 300);
    assert_eq!(
        r[..4],
        [
            rec(33_898_000_000_000, 0, Op::Read, 0, 4096),
            rec(33_898_000_350_000, 0, Op::Write, 919 * 8 * 512, 4096),
            rec(
                33_898_000_700_000,
                0,
                Op::Read,
                (15838 % 1000) * 8 * 512,
                4096
            ),
            rec(
                33_898_001_050_000,
                0,
                Op::Write,
                (23757 % 1000) * 8 * 512,
                4096
            ),
        ]
    );
    let e = read_error(&p, "vscsi");
    assert!(
        e.contains("overflows") && e.contains("--format vscsi-us"),
        "{e}"
    );
    // microseconds from 0: as seconds they would be one request every 6
    // minutes, as microseconds 2,900 a second
    let p = d.file("cloudphysics_us0.csv", vscsi_micros(300, 0));
    assert_eq!(trace::detect(&p).unwrap(), "vscsi-us");
    // 20 units apart: plausible either way, so detection asks
    let p = d.file(
        "either.csv",
        (0..50)
            .map(|i| format!("1,{},2a,4096,{}\n", i * 20, i * 8))
            .collect::<String>(),
    );
    let e = trace::detect(&p).unwrap_err().to_string();
    assert!(
        e.contains("ambiguous") && e.contains("--format vscsi-us"),
        "{e}"
    );
    // the libCacheSim cut in seconds stays vscsi: 30 requests a second
    let mut secs = String::from("version,time,op,size,lbn\n");
    for i in 0..300 {
        secs += &format!("1,{},2a,4096,{}\n", 33898 + i / 30, i * 8);
    }
    let p = d.file("cloudPhysicsIO.csv", secs);
    assert_eq!(trace::detect(&p).unwrap(), "vscsi");
}

const FIU_LINES: &str =
    "89966527613340 4 syslogd 904265560 8 W 6 0 531e779eb4ffbd9c5c4fad1f99bb73f6\n\
89966527622732 4 syslogd 904265568 8 W 6 0 f91b54c5e1ba1bc0cf1c3e4c3b12ba2c\n\
89966536103208 2977 hald-addon-stor 0 8 R 6 1 9b6d4b2e4a4e9f0a5cb8cd74e0c6d1e0\n";

#[test]
fn a_tar_wrapped_fiu_trace_is_read_as_fiu() {
    let d = TempDir::new("traces");
    let mut b = tar::Builder::new(Vec::new());
    let day2 = FIU_LINES.replace("8999", "9999");
    for (name, data) in [
        ("homes/homes-110108-112108.1.blkparse", FIU_LINES.as_bytes()),
        ("homes/homes-110108-112108.2.blkparse", day2.as_bytes()),
    ] {
        let mut h = tar::Header::new_ustar();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        b.append_data(&mut h, name, data).unwrap();
    }
    let tarball = b.into_inner().unwrap();
    let plain = records(&d.file("fiu.blkparse", FIU_LINES), "fiu");
    for (name, bytes) in [
        ("homes.tar", tarball.clone()),
        ("homes.tar.gz", {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&tarball).unwrap();
            gz.finish().unwrap()
        }),
    ] {
        let p = d.file(name, bytes);
        assert_eq!(trace::detect(&p).unwrap(), "fiu", "{name}");
        let r = records(&p, "fiu");
        assert_eq!(
            (r.len(), &r[..3]),
            (6, &plain[..]),
            "{name}: members in order"
        );
    }
    // The first lines of a tar (`head -n 100`): a tar header on the first
    // line, the archive cut inside its member.
    let long: String = (0..120u64)
        .map(|i| {
            format!(
                "{} 4 syslogd {} 8 W 6 0 531e779eb4ffbd9c5c4fad1f99bb73f6\n",
                1000 + i,
                (i % 80) * 64
            )
        })
        .collect();
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_ustar();
    h.set_size(long.len() as u64);
    h.set_mode(0o644);
    b.append_data(&mut h, "homes-110108-112108.1.blkparse", long.as_bytes())
        .unwrap();
    let tarball = b.into_inner().unwrap();
    let cut_at = tarball
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(99)
        .unwrap()
        .0
        + 1;
    let p = d.file("homes-head.blkparse", &tarball[..cut_at]);
    assert_eq!(trace::detect(&p).unwrap(), "fiu");
    let (mut s, _) = trace::open_selected(&p, None, &Selection::default()).unwrap();
    let mut got = Vec::new();
    while let Some(r) = s.next_record().unwrap() {
        got.push(r);
    }
    assert_eq!(got.len(), 100, "the complete lines before the cut");
    assert!(s.stats().truncated, "a cut archive is reported");
    let r = trace_run(&p, false);
    let codes: Vec<&str> = r.warnings.iter().map(|w| w.code).collect();
    assert!(codes.contains(&"trace-truncated"), "{codes:?}");
}

#[test]
fn blkparse_with_few_issue_events_is_read_from_queue_events() {
    let d = TempDir::new("traces");
    // A remapped device: 1000 queued writes, 84 issued here.
    let mut text = String::new();
    for i in 0..1000u64 {
        let t = |ns: u64| format!("{}.{:09}", i / 100, (i % 100) * 10_000 + ns);
        text += &format!(
            "253,0 1 {} {} 77 Q W {} + 8 [kworker]\n",
            2 * i + 1,
            t(0),
            i * 64
        );
        text += &format!(
            "253,0 1 {} {} 77 A W {} + 8 <- (8,1) 9\n",
            2 * i + 2,
            t(5),
            i * 64
        );
        if i % 12 == 0 {
            text += &format!("253,0 1 9{i} {} 77 D W {} + 8 [kworker]\n", t(9), i * 64);
        }
    }
    let p = d.file("dm-0.blkparse", &text);
    assert_eq!(trace::detect(&p).unwrap(), "blkparse:Q");
    assert_eq!(records(&p, "blkparse:Q").len(), 1000);
    // read from D anyway: the replay says so and names blkparse:Q
    let mut sim = Simulation::new(RunConfig {
        device: DeviceConfig {
            op: 0.5,
            segment_blocks: 4,
            ..Default::default()
        },
        trace: Some(TraceConfig {
            path: p,
            format: Some("blkparse".into()),
            capacity_from_trace: true,
            ..Default::default()
        }),
        writes: u64::MAX,
        ..Default::default()
    })
    .unwrap();
    sim.run().unwrap();
    let r = sim.result();
    let w = r.warnings.iter().find(|w| w.code == "few-issue-events");
    assert!(
        w.is_some_and(
            |w| w.message.contains("--format blkparse:Q") && w.message.contains("1000 queue")
        ),
        "{:?}",
        r.warnings
    );
    // a normal trace (a D for every Q) stays blkparse
    let p = d.file("sda.txt", BLKPARSE.as_bytes());
    assert_eq!(trace::detect(&p).unwrap(), "blkparse");
}

#[test]
fn refusals_name_the_flag_that_reads_the_closest_layouts() {
    let d = TempDir::new("traces");
    // a header naming its columns: the column map is read off it
    let p = d.file(
        "custom.csv",
        b"Timestamp;Volume;Kind;Offset;Length;Latency\n1.5;3;write;4096;512;17\n2.5;3;read;0;4096;3\n",
    );
    let e = trace::detect(&p).unwrap_err().to_string();
    assert!(
        e.contains("no reader for this layout")
            && e.contains(
                "--format csv:time=0,op=2,offset=3,size=4,device=1,sep=semicolon,header=1"
            ),
        "{e}"
    );
    // a layout that fits one reader poorly: that reader, with its flag
    let p = d.file("odd.trace", b"0.5 0 7 3 1\nalpha\nbeta\ngamma\n");
    let e = trace::detect(&p).unwrap_err().to_string();
    assert!(
        e.contains("closest layouts") && e.contains("--format disksim (score"),
        "{e}"
    );
    // a wrong --format: what detection reads instead
    let p = d.file("hm_0.csv", MSR.as_bytes());
    let e = read_error(&p, "blkparse");
    assert!(e.contains("detection reads it as --format msr"), "{e}");
}

#[test]
fn inspect_counts_drive_writes_on_the_footprint_as_replay_does() {
    let d = TempDir::new("traces");
    // 200 writes of one block each, 100 distinct blocks far apart
    let text: String = (0..200u64)
        .map(|i| format!("0,W,{},4096,{}\n", (i % 100) << 30, i))
        .collect();
    let p = d.file("sparse.csv", text);
    let (mut s, fmt) = trace::open_selected(&p, None, &Selection::default()).unwrap();
    let st = stats::compute(&mut s, &fmt, 4096, None).unwrap();
    assert_eq!((st.footprint_blocks, st.capacity_blocks), (100, 100));
    assert_eq!(st.drive_writes, Some(2.0));
    assert_eq!(
        st.address_space_drive_writes,
        Some(200.0 / (99.0 * 262144.0 + 1.0))
    );
    let r = trace_run(&p, false);
    assert_eq!(r.drive_writes, 2.0, "replay's base is the footprint too");
}
