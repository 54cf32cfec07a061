//! Lifetime annotation: for every user-written block, the logical time at
//! which it dies (the next write or trim of its LBA), found by one backward
//! pass over the block events.
//!
//! The pass is streamed so that traces of billions of block writes fit in
//! memory: a forward pass spills the block events (8 B each) to a scratch
//! file; the backward pass reads that file in chunks from its end, keeps one
//! "next event" time per LBA, and writes the death times in chunks straight
//! to their place in the output file. Memory: 8 B per logical block plus two
//! 8 MiB chunks, whatever the trace length.
//!
//! Output file (little endian): `WAFERLIF`, version u32, key length u32, the
//! key (JSON naming what was annotated, padded to 8 B), writes N u64, table
//! length L u64, then N death times and L first-event times (per LBA: when
//! its pre-existing content dies, used after a prefill). Times count user
//! block writes from the first write of the annotated stream; [`NEVER`]
//! marks a block that outlives the stream.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

/// Death time of a block that is never overwritten or trimmed.
pub const NEVER: u64 = u64::MAX;

const MAGIC: &[u8; 8] = b"WAFERLIF";
const VERSION: u32 = 1;
/// Events per chunk of the backward pass (8 MiB).
const CHUNK: usize = 1 << 20;
/// Death times per read of a [`DeathReader`] (2 MiB).
pub const READ_CHUNK: usize = CHUNK / 4;
/// Marks a trim in the spilled event stream.
const TRIM: u64 = 1 << 63;

fn io_err(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::trace(&path.display().to_string(), None, format!("{what}: {e}"))
}

/// Collects block events (forward), then annotates them (backward).
pub struct Annotator {
    table_len: u64,
    spill_path: PathBuf,
    spill: BufWriter<File>,
    events: u64,
    writes: u64,
    /// Events per chunk of the backward pass.
    chunk: usize,
}

impl Annotator {
    /// An annotator for a device of `table_len` logical blocks, spilling its
    /// events to a scratch file next to `out` (removed when done).
    pub fn new(table_len: u64, out: &Path) -> Result<Self> {
        let spill_path = with_suffix(out, ".events.tmp");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&spill_path)
            .map_err(|e| io_err(&spill_path, "cannot create", e))?;
        Ok(Annotator {
            table_len,
            spill_path,
            spill: BufWriter::with_capacity(1 << 20, f),
            events: 0,
            writes: 0,
            chunk: CHUNK,
        })
    }

    /// Use chunks of `events` events (tests cross chunk boundaries with it).
    pub fn with_chunk(mut self, events: usize) -> Self {
        self.chunk = events.max(1);
        self
    }

    fn push(&mut self, lba: u64, blocks: u32, tag: u64) -> Result<()> {
        let end = lba.saturating_add(blocks as u64);
        if end > self.table_len {
            return Err(Error::Simulation(format!(
                "request for blocks [{lba}, +{blocks}) is outside the device's {} logical blocks",
                self.table_len
            )));
        }
        for l in lba..end {
            self.spill
                .write_all(&(l | tag).to_le_bytes())
                .map_err(|e| io_err(&self.spill_path, "cannot write", e))?;
        }
        self.events += blocks as u64;
        Ok(())
    }

    /// User write of `blocks` blocks from `lba`.
    pub fn write(&mut self, lba: u64, blocks: u32) -> Result<()> {
        self.push(lba, blocks, 0)?;
        self.writes += blocks as u64;
        Ok(())
    }

    /// Trim of `blocks` blocks from `lba`.
    pub fn trim(&mut self, lba: u64, blocks: u32) -> Result<()> {
        self.push(lba, blocks, TRIM)
    }

    /// User block writes seen so far.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Run the backward pass and write the annotation to `out` (through a
    /// temporary name, so a crash never leaves a half-written file).
    pub fn finish(mut self, out: &Path, key: &str) -> Result<Annotation> {
        self.spill
            .flush()
            .map_err(|e| io_err(&self.spill_path, "cannot write", e))?;
        self.backward(out, key)
        // Drop removes the scratch file.
    }

    fn backward(&self, out: &Path, key: &str) -> Result<Annotation> {
        let (table_len, writes, events) = (self.table_len, self.writes, self.events);
        let spill_path = &self.spill_path;
        let spill = self.spill.get_ref();
        let tmp = with_suffix(out, ".tmp");
        let f = File::create(&tmp).map_err(|e| io_err(&tmp, "cannot create", e))?;
        let header = header(key, writes, table_len);
        let deaths_at = header.len() as u64;
        f.write_all_at(&header, 0)
            .map_err(|e| io_err(&tmp, "cannot write", e))?;

        let mut next = vec![NEVER; table_len as usize];
        let n = self.chunk;
        let mut chunk = vec![0u8; n * 8];
        let mut deaths: Vec<u8> = Vec::with_capacity(n * 8);
        let mut t = writes; // writes before the event being looked at
        let mut hi = events;
        // Deaths are produced newest first; `deaths` holds the newest
        // unflushed ones in reverse order.
        while hi > 0 {
            let lo = hi.saturating_sub(n as u64);
            let buf = &mut chunk[..((hi - lo) * 8) as usize];
            spill
                .read_exact_at(buf, lo * 8)
                .map_err(|e| io_err(spill_path, "cannot read back", e))?;
            for ev in buf.chunks_exact(8).rev() {
                let ev = u64::from_le_bytes(ev.try_into().expect("8-byte chunk"));
                let lba = (ev & !TRIM) as usize;
                if ev & TRIM != 0 {
                    next[lba] = t;
                } else {
                    t -= 1;
                    deaths.extend_from_slice(&next[lba].to_le_bytes());
                    next[lba] = t;
                    if deaths.len() == n * 8 {
                        flush_reversed(&f, &tmp, &mut deaths, deaths_at + t * 8)?;
                    }
                }
            }
            hi = lo;
        }
        debug_assert_eq!(t, 0);
        flush_reversed(&f, &tmp, &mut deaths, deaths_at)?;
        // The first-event table, through the (now free) chunk buffer.
        let mut at = deaths_at + writes * 8;
        for part in next.chunks(n) {
            let buf = &mut chunk[..part.len() * 8];
            for (b, x) in buf.chunks_exact_mut(8).zip(part) {
                b.copy_from_slice(&x.to_le_bytes());
            }
            f.write_all_at(buf, at)
                .map_err(|e| io_err(&tmp, "cannot write", e))?;
            at += buf.len() as u64;
        }
        f.sync_all().map_err(|e| io_err(&tmp, "cannot sync", e))?;
        drop(f);
        std::fs::rename(&tmp, out).map_err(|e| io_err(out, "cannot move into place", e))?;
        Annotation::open(out)
    }
}

impl Drop for Annotator {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.spill_path);
    }
}

/// Write the death times collected newest first at `at`, oldest first.
fn flush_reversed(f: &File, path: &Path, deaths: &mut Vec<u8>, at: u64) -> Result<()> {
    let n = deaths.len() / 8;
    for i in 0..n / 2 {
        let (a, b) = (i * 8, (n - 1 - i) * 8);
        for k in 0..8 {
            deaths.swap(a + k, b + k);
        }
    }
    f.write_all_at(deaths, at)
        .map_err(|e| io_err(path, "cannot write", e))?;
    deaths.clear();
    Ok(())
}

/// `p` with `suffix` and this process's own tag appended: scratch files of
/// two processes annotating the same trace at once never collide (the
/// finished file is moved into place atomically).
fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut s = p.as_os_str().to_owned();
    s.push(format!(".{}-{n}{suffix}", std::process::id()));
    PathBuf::from(s)
}

fn header(key: &str, writes: u64, table_len: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(32 + key.len());
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.extend_from_slice(&(key.len() as u32).to_le_bytes());
    h.extend_from_slice(key.as_bytes());
    while h.len() % 8 != 0 {
        h.push(0);
    }
    h.extend_from_slice(&writes.to_le_bytes());
    h.extend_from_slice(&table_len.to_le_bytes());
    h
}

/// An annotation file, opened.
#[derive(Debug)]
pub struct Annotation {
    path: PathBuf,
    file: File,
    key: String,
    writes: u64,
    table_len: u64,
    deaths_at: u64,
    scratch: bool,
}

impl Drop for Annotation {
    fn drop(&mut self) {
        if self.scratch {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Annotation {
    /// Remove the file when this handle is dropped (a scratch annotation).
    pub fn set_scratch(&mut self, scratch: bool) {
        self.scratch = scratch;
    }

    /// Open and validate an annotation file.
    pub fn open(path: &Path) -> Result<Self> {
        let bad = |why: String| Error::trace(&path.display().to_string(), None, why);
        let file = File::open(path).map_err(|e| io_err(path, "cannot open", e))?;
        let len = file
            .metadata()
            .map_err(|e| io_err(path, "cannot stat", e))?
            .len();
        let mut fixed = [0u8; 16];
        file.read_exact_at(&mut fixed, 0)
            .map_err(|_| bad("not a wafer lifetime annotation (too short)".into()))?;
        if &fixed[..8] != MAGIC {
            return Err(bad("not a wafer lifetime annotation (bad magic)".into()));
        }
        let version = u32::from_le_bytes(fixed[8..12].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(bad(format!(
                "annotation version {version}, this wafer reads {VERSION}; delete it to recompute"
            )));
        }
        let key_len = u32::from_le_bytes(fixed[12..16].try_into().expect("4 bytes")) as u64;
        let key_end = 16 + key_len;
        let counts_at = key_end.div_ceil(8) * 8;
        if counts_at + 16 > len {
            return Err(bad("truncated annotation header".into()));
        }
        let mut key = vec![0u8; key_len as usize];
        file.read_exact_at(&mut key, 16)
            .map_err(|e| io_err(path, "cannot read", e))?;
        let key = String::from_utf8(key).map_err(|_| bad("annotation key is not UTF-8".into()))?;
        let mut counts = [0u8; 16];
        file.read_exact_at(&mut counts, counts_at)
            .map_err(|e| io_err(path, "cannot read", e))?;
        let writes = u64::from_le_bytes(counts[..8].try_into().expect("8 bytes"));
        let table_len = u64::from_le_bytes(counts[8..].try_into().expect("8 bytes"));
        let deaths_at = counts_at + 16;
        let want = writes
            .checked_add(table_len)
            .and_then(|n| n.checked_mul(8))
            .and_then(|n| n.checked_add(deaths_at));
        if want != Some(len) {
            return Err(bad(format!(
                "annotation of {writes} writes and {table_len} blocks should be {} bytes, is {len} \
                 (truncated?); delete it to recompute",
                want.map_or("too many".to_string(), |w| w.to_string())
            )));
        }
        Ok(Annotation {
            path: path.to_path_buf(),
            file,
            key,
            writes,
            table_len,
            deaths_at,
            scratch: false,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// What was annotated (JSON).
    pub fn key(&self) -> &str {
        &self.key
    }
    /// User block writes annotated.
    pub fn writes(&self) -> u64 {
        self.writes
    }
    /// Logical blocks of the annotated device.
    pub fn table_len(&self) -> u64 {
        self.table_len
    }

    /// Death times of writes `[from, from + out.len())`.
    pub fn read_deaths(&self, from: u64, out: &mut [u64]) -> Result<()> {
        self.read_u64s(self.deaths_at + from * 8, out)
    }

    /// Per LBA, when the content it holds before the stream starts dies.
    pub fn first_events(&self) -> Result<Vec<u64>> {
        let mut v = vec![0u64; self.table_len as usize];
        self.read_u64s(self.deaths_at + self.writes * 8, &mut v)?;
        Ok(v)
    }

    fn read_u64s(&self, at: u64, out: &mut [u64]) -> Result<()> {
        let mut bytes = vec![0u8; out.len() * 8];
        self.file
            .read_exact_at(&mut bytes, at)
            .map_err(|e| io_err(&self.path, "cannot read", e))?;
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(8)) {
            *o = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        }
        Ok(())
    }
}

/// Streams an annotation's death times in write order, a chunk at a time.
pub struct DeathReader {
    ann: Arc<Annotation>,
    buf: Vec<u64>,
    pos: usize,
    next_chunk: u64,
}

impl DeathReader {
    /// Read `ann` from its first write.
    pub fn new(ann: Arc<Annotation>) -> Self {
        DeathReader {
            ann,
            buf: Vec::new(),
            pos: 0,
            next_chunk: 0,
        }
    }

    /// The chunk in memory, the position in it and the next chunk's index
    /// (a checkpoint's cursor).
    pub fn position(&self) -> (Vec<u64>, usize, u64) {
        (self.buf.clone(), self.pos, self.next_chunk)
    }

    /// Go on from a [`DeathReader::position`] of the same annotation.
    pub fn set_position(&mut self, buf: Vec<u64>, pos: usize, next_chunk: u64) {
        self.buf = buf;
        self.pos = pos;
        self.next_chunk = next_chunk;
    }

    /// The annotation read.
    pub fn annotation(&self) -> &Annotation {
        &self.ann
    }

    /// Death time of the next write, `None` past the annotated writes.
    #[inline]
    pub fn next_death(&mut self) -> Result<Option<u64>> {
        if self.pos == self.buf.len() {
            let n = (self.ann.writes - self.next_chunk).min(READ_CHUNK as u64) as usize;
            if n == 0 {
                return Ok(None);
            }
            self.buf.resize(n, 0);
            self.ann.read_deaths(self.next_chunk, &mut self.buf)?;
            self.next_chunk += n as u64;
            self.pos = 0;
        }
        self.pos += 1;
        Ok(Some(self.buf[self.pos - 1]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// (is_trim, lba) events -> (deaths, first events), by a forward scan.
    fn brute(events: &[(bool, u64)], table: u64) -> (Vec<u64>, Vec<u64>) {
        let mut deaths = Vec::new();
        let mut last: Vec<Option<usize>> = vec![None; table as usize];
        let mut first = vec![NEVER; table as usize];
        let mut t = 0u64;
        for &(trim, lba) in events {
            if first[lba as usize] == NEVER {
                first[lba as usize] = t;
            }
            if let Some(i) = last[lba as usize].take() {
                deaths[i] = t;
            }
            if !trim {
                deaths.push(NEVER);
                last[lba as usize] = Some(deaths.len() - 1);
                t += 1;
            }
        }
        (deaths, first)
    }

    fn annotate(events: &[(bool, u64)], table: u64, chunk: usize, name: &str) -> Annotation {
        let out =
            std::env::temp_dir().join(format!("wafer-ann-{}-{name}.wlife", std::process::id()));
        let mut a = Annotator::new(table, &out).unwrap().with_chunk(chunk);
        for &(trim, lba) in events {
            if trim {
                a.trim(lba, 1).unwrap();
            } else {
                a.write(lba, 1).unwrap();
            }
        }
        let mut ann = a.finish(&out, "{\"test\":1}").unwrap();
        ann.set_scratch(true);
        ann
    }

    fn deaths(ann: Annotation) -> (Vec<u64>, Vec<u64>) {
        let first = ann.first_events().unwrap();
        let mut r = DeathReader::new(Arc::new(ann));
        let mut d = Vec::new();
        while let Some(x) = r.next_death().unwrap() {
            d.push(x);
        }
        (d, first)
    }

    #[test]
    fn hand_made_stream() {
        // time: 0:W1 1:W2 2:W1 T2 3:W3 4:W1 ; LBA 0 never touched
        let ev = [
            (false, 1),
            (false, 2),
            (false, 1),
            (true, 2),
            (false, 3),
            (false, 1),
        ];
        let ann = annotate(&ev, 4, 2, "hand");
        assert_eq!(ann.writes(), 5);
        assert_eq!(ann.key(), "{\"test\":1}");
        let (d, first) = deaths(ann);
        assert_eq!(d, vec![2, 3, 4, NEVER, NEVER]);
        assert_eq!(first, vec![NEVER, 0, 1, 3]);
    }

    #[test]
    fn bad_files_are_named_errors() {
        let p = std::env::temp_dir().join(format!("wafer-ann-{}-bad.wlife", std::process::id()));
        std::fs::write(&p, b"not an annotation at all").unwrap();
        let e = Annotation::open(&p).unwrap_err().to_string();
        assert!(e.contains("bad magic") && e.contains("wafer-ann"), "{e}");
        let good = annotate(&[(false, 0), (false, 0)], 1, 4, "trunc");
        let bytes = std::fs::read(good.path()).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() - 3]).unwrap();
        let e = Annotation::open(&p).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        let _ = std::fs::remove_file(&p);
        let mut a = Annotator::new(2, &p).unwrap();
        let e = a.write(1, 2).unwrap_err().to_string();
        assert!(e.contains("outside the device's 2 logical blocks"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn backward_pass_matches_forward_scan(
            ev in prop::collection::vec((prop::bool::weighted(0.15), 0u64..12), 0..300),
            chunk in 1usize..40,
        ) {
            let ann = annotate(&ev, 12, chunk, "prop");
            let got = deaths(ann);
            prop_assert_eq!(got, brute(&ev, 12));
        }
    }
}
