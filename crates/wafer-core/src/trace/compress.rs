//! Transparent decompression: gzip, xz and zstd are recognised by their magic
//! bytes (not the file name), so a renamed file still reads.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Bytes read from trace files by this process so far (as stored: a
/// compressed file counts its compressed bytes). A progress line compares
/// it with the file's size while a long read runs on another thread.
static READ: AtomicU64 = AtomicU64::new(0);

/// Bytes read from trace files by this process so far (see [`Counted`]).
pub fn bytes_read() -> u64 {
    READ.load(Ordering::Relaxed)
}

/// A file whose reads add to [`bytes_read`] (one relaxed add per read
/// call, i.e. per buffer refill: nothing per line).
pub struct Counted(pub File);

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        READ.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl Seek for Counted {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.0.seek(pos)
    }
}

const GZIP: &[u8] = &[0x1f, 0x8b];
const XZ: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// Read buffer of a trace read line by line [bytes].
const BIG: usize = 1 << 20;

/// Open `path` for line reading, decompressing gzip, xz or zstd.
pub fn open(path: &str) -> Result<Box<dyn BufRead + Send>> {
    open_with(path, BIG)
}

/// [`open`] with read buffers of `capacity` bytes (smaller for the many
/// streams a blktrace merge keeps open at once).
pub fn open_with(path: &str, capacity: usize) -> Result<Box<dyn BufRead + Send>> {
    let (reader, compressed) = raw(path, capacity)?;
    if !compressed {
        return Ok(Box::new(reader));
    }
    let head = reader.buffer();
    let buffered = |r: Box<dyn Read + Send>| -> Box<dyn BufRead + Send> {
        Box::new(BufReader::with_capacity(capacity, r))
    };
    Ok(if head.starts_with(GZIP) {
        buffered(Box::new(flate2::read::MultiGzDecoder::new(reader)))
    } else if head.starts_with(XZ) {
        buffered(Box::new(liblzma::read::XzDecoder::new_multi_decoder(
            reader,
        )))
    } else {
        let dec = zstd::stream::read::Decoder::with_buffer(reader)
            .map_err(|e| Error::trace(path, None, format!("bad zstd stream: {e}")))?;
        buffered(Box::new(dec))
    })
}

/// `path` read from byte `skip` of its decompressed content on: a seek for a
/// plain file, reading and dropping the first `skip` bytes of a compressed
/// one (a compressed stream cannot seek).
pub fn open_at(path: &str, skip: u64, capacity: usize) -> Result<Box<dyn BufRead + Send>> {
    let (mut reader, compressed) = raw(path, capacity)?;
    let failed = |e: std::io::Error| Error::trace(path, None, format!("cannot read: {e}"));
    if !compressed {
        reader.seek(SeekFrom::Start(skip)).map_err(failed)?;
        return Ok(Box::new(reader));
    }
    drop(reader);
    let mut r = open_with(path, capacity)?;
    let mut left = skip;
    while left > 0 {
        let n = r.fill_buf().map_err(failed)?.len().min(left as usize);
        if n == 0 {
            return Err(Error::trace(
                path,
                None,
                format!("ends before byte {skip} (truncated archive?)"),
            ));
        }
        r.consume(n);
        left -= n as u64;
    }
    Ok(r)
}

/// The file, buffered, and whether its first bytes are a compression magic.
fn raw(path: &str, capacity: usize) -> Result<(BufReader<Counted>, bool)> {
    let file = Counted(
        File::open(path).map_err(|e| Error::trace(path, None, format!("cannot open: {e}")))?,
    );
    let mut reader = BufReader::with_capacity(capacity, file);
    let head = reader
        .fill_buf()
        .map_err(|e| Error::trace(path, None, format!("cannot read: {e}")))?;
    let compressed = [GZIP, XZ, ZSTD].iter().any(|m| head.starts_with(m));
    Ok((reader, compressed))
}
