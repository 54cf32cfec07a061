//! A multi-volume trace split into one native trace per volume (device id),
//! as fleet studies replay them (issue 47): `wafer traces split`.
//!
//! One pass over the source appends each volume's records to its own spill
//! file through a small buffer (a volume costs [`FLUSH`] records of memory
//! and no open file between flushes, so thousands of volumes need neither
//! memory nor file descriptors in proportion); then each chosen volume's
//! spill is written as a checksummed native file, one volume at a time
//! (its footprint counted then), and the spills are removed. Records keep
//! the source's timestamps and device ids, so a split volume replays as
//! `--device ID` of the source does.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{native, Record, Selected};
use crate::error::{Error, Result};
use crate::request::Op;

/// Bytes of one record in a spill file: time, device, op, offset, size.
const RAW: usize = 33;
/// A volume's buffer before it is appended to its spill file [records].
const FLUSH: usize = 2048;

/// Which volumes to keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Volumes {
    /// Every volume of the file.
    All,
    /// These device ids (each must be in the file).
    Ids(Vec<u64>),
    /// The `n` volumes that write the most bytes.
    Top(usize),
}

/// One split volume.
#[derive(Clone, Debug, Serialize)]
pub struct Volume {
    /// Its device id as a selection names it (`N` or `MAJ,MIN`).
    pub device: String,
    /// Its native file.
    pub path: String,
    /// Requests.
    pub requests: u64,
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Distinct blocks of `block_size` bytes it touches.
    pub footprint_blocks: u64,
}

#[derive(Default)]
struct Spill {
    buf: Vec<u8>,
    requests: u64,
    reads: u64,
    writes: u64,
    write_bytes: u64,
}

/// Split the trace file `path` (`format`, `None` = detect; `sel` applied)
/// into its volumes, each with its own clock: a timestamp earlier than its
/// own volume's previous one is raised to it, never to another volume's
/// (a file of volumes written one after another keeps every volume's times;
/// the replayer's clock is each log's own). See [`split`].
pub fn split_file(
    path: &str,
    format: Option<&str>,
    sel: &super::Selection,
    out_dir: &str,
    which: &Volumes,
    block_size: u32,
) -> Result<Vec<Volume>> {
    let sel = super::Selection {
        clock_per_device: true,
        ..sel.clone()
    };
    let (mut s, fmt) = super::open_selected(path, format, &sel)?;
    split(&mut s, path, &fmt, out_dir, which, block_size)
}

/// Split `src` (read from `source`, a trace of `source_format`) into
/// `out_dir/STEM.dev<ID>.arrow` files, keeping `which` volumes, in the order
/// the volumes first appear (top-N: by bytes written). A device id asked
/// for that the file does not hold is an error naming it.
pub fn split(
    src: &mut Selected,
    source: &str,
    source_format: &str,
    out_dir: &str,
    which: &Volumes,
    block_size: u32,
) -> Result<Vec<Volume>> {
    let out = Path::new(out_dir);
    let io = |p: &Path, e: std::io::Error| {
        Error::trace(&p.display().to_string(), None, format!("cannot write: {e}"))
    };
    fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let spill_dir = out.join(format!(".wafer-split-{}", std::process::id()));
    fs::create_dir_all(&spill_dir).map_err(|e| io(&spill_dir, e))?;
    let result = run(
        src,
        source,
        source_format,
        out,
        &spill_dir,
        which,
        block_size,
    );
    let _ = fs::remove_dir_all(&spill_dir);
    result
}

fn spill_path(dir: &Path, device: u64) -> PathBuf {
    dir.join(format!("{device}.raw"))
}

fn append(dir: &Path, device: u64, buf: &[u8]) -> Result<()> {
    let p = spill_path(dir, device);
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p)
        .and_then(|mut f| f.write_all(buf).map(|()| f))
        .map_err(|e| Error::trace(&p.display().to_string(), None, format!("cannot write: {e}")))?;
    f.flush()
        .map_err(|e| Error::trace(&p.display().to_string(), None, format!("cannot write: {e}")))
}

fn run(
    src: &mut Selected,
    source: &str,
    source_format: &str,
    out: &Path,
    spill_dir: &Path,
    which: &Volumes,
    block_size: u32,
) -> Result<Vec<Volume>> {
    let wanted: Option<HashSet<u64>> = match which {
        Volumes::Ids(ids) => Some(ids.iter().copied().collect()),
        _ => None,
    };
    let mut spills: HashMap<u64, Spill> = HashMap::new();
    let mut order: Vec<u64> = Vec::new();
    // Every device of the file, in order of appearance (for an error naming them).
    let (mut all, mut every): (HashSet<u64>, Vec<u64>) = (HashSet::new(), Vec::new());
    let mut seen = 0u64;
    while let Some(r) = src.next_record()? {
        seen += 1;
        if seen & 0xFFFF == 0 {
            crate::interrupt::check()?;
        }
        if all.insert(r.device) {
            every.push(r.device);
        }
        if wanted.as_ref().is_some_and(|w| !w.contains(&r.device)) {
            continue;
        }
        let s = spills.entry(r.device).or_insert_with(|| {
            order.push(r.device);
            Spill::default()
        });
        s.buf.extend_from_slice(&r.time_ns.to_le_bytes());
        s.buf.extend_from_slice(&r.device.to_le_bytes());
        s.buf.push(r.op.code());
        s.buf.extend_from_slice(&r.offset.to_le_bytes());
        s.buf.extend_from_slice(&r.size.to_le_bytes());
        s.requests += 1;
        match r.op {
            Op::Read => s.reads += 1,
            Op::Write => {
                s.writes += 1;
                s.write_bytes += r.size;
            }
            Op::Trim => {}
        }
        if s.buf.len() >= FLUSH * RAW {
            append(spill_dir, r.device, &s.buf)?;
            s.buf.clear();
        }
    }
    for (&d, s) in spills.iter_mut() {
        if !s.buf.is_empty() {
            append(spill_dir, d, &s.buf)?;
            s.buf = Vec::new();
        }
    }
    let chosen: Vec<u64> = match which {
        Volumes::All => order.clone(),
        Volumes::Ids(ids) => {
            let missing: Vec<String> = ids
                .iter()
                .filter(|d| !spills.contains_key(d))
                .map(|&d| super::device_name(d))
                .collect();
            if !missing.is_empty() {
                let have: Vec<String> = every.iter().map(|&d| super::device_name(d)).collect();
                return Err(Error::trace(
                    source,
                    None,
                    format!(
                        "no volume {} in it{}",
                        missing.join(", "),
                        if have.is_empty() {
                            String::new()
                        } else {
                            format!(" (its volumes: {})", have.join(", "))
                        }
                    ),
                ));
            }
            let mut v = ids.clone();
            v.dedup();
            v
        }
        Volumes::Top(n) => {
            let mut v = order.clone();
            // By bytes written, most first; ties in order of appearance.
            v.sort_by_key(|d| std::cmp::Reverse(spills[d].write_bytes));
            v.truncate(*n);
            v
        }
    };
    if chosen.is_empty() {
        return Err(Error::trace(
            source,
            None,
            "no volume to split (no request selected)",
        ));
    }
    let stem = Path::new(source)
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "trace".into());
    let stem = stem.split('.').next().unwrap_or("trace").to_string();
    // Each chosen volume's spill becomes its native file on its own: the
    // volumes are shared out to the cores (one volume per worker at a time),
    // and the list keeps the chosen order.
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(chosen.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<Option<Result<Volume>>>> =
        std::sync::Mutex::new((0..chosen.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&d) = chosen.get(k) else {
                    return;
                };
                let v = crate::interrupt::check().and_then(|()| {
                    write_volume(
                        d,
                        &spills[&d],
                        out,
                        spill_dir,
                        &stem,
                        source,
                        source_format,
                        block_size,
                    )
                });
                let failed = v.is_err();
                done.lock().unwrap_or_else(|e| e.into_inner())[k] = Some(v);
                if failed {
                    // the others stop at their next volume
                    next.store(chosen.len(), std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    // Volumes are taken in order and each taken one is finished, so an
    // unwritten one only follows a failed one, whose error comes first.
    let mut volumes = Vec::with_capacity(chosen.len());
    for v in done.into_inner().unwrap_or_else(|e| e.into_inner()) {
        volumes.push(v.expect("an unwritten volume follows a failed one")?);
    }
    Ok(volumes)
}

/// Volume `d`'s spill (counts `s`) written as `out/STEM.devID.arrow`, its
/// footprint counted on the way; the spill is removed.
#[allow(clippy::too_many_arguments)]
fn write_volume(
    d: u64,
    s: &Spill,
    out: &Path,
    spill_dir: &Path,
    stem: &str,
    source: &str,
    source_format: &str,
    block_size: u32,
) -> Result<Volume> {
    let name = super::device_name(d).replace(',', "-");
    let path = out.join(format!("{stem}.dev{name}.arrow"));
    let raw = spill_path(spill_dir, d);
    let file = File::open(&raw).map_err(|e| {
        Error::trace(
            &raw.display().to_string(),
            None,
            format!("cannot read: {e}"),
        )
    })?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut blocks: HashSet<u64> = HashSet::new();
    let bs = block_size as u64;
    let mut rec = [0u8; RAW];
    let raw_name = raw.display().to_string();
    let path_name = path.display().to_string();
    native::write_records(
        || match reader.read_exact(&mut rec) {
            Ok(()) => {
                let u = |i: usize| u64::from_le_bytes(rec[i..i + 8].try_into().expect("8 bytes"));
                let r = Record {
                    time_ns: u(0),
                    device: u(8),
                    op: match rec[16] {
                        0 => Op::Read,
                        1 => Op::Write,
                        _ => Op::Trim,
                    },
                    offset: u(17),
                    size: u(25),
                };
                if r.size > 0 {
                    for b in r.offset / bs..=(r.offset + r.size - 1) / bs {
                        blocks.insert(b);
                    }
                }
                Ok(Some(r))
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(Error::trace(
                &raw_name,
                None,
                format!("cannot read this spill of the split: {e}"),
            )),
        },
        &path_name,
        source,
        source_format,
    )?;
    let _ = fs::remove_file(&raw);
    Ok(Volume {
        device: super::device_name(d),
        path: path.display().to_string(),
        requests: s.requests,
        reads: s.reads,
        writes: s.writes,
        write_bytes: s.write_bytes,
        footprint_blocks: blocks.len() as u64,
    })
}
