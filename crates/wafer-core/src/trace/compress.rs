//! Transparent decompression: gzip, xz and zstd are recognised by their magic
//! bytes (not the file name), so a renamed file still reads.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use crate::error::{Error, Result};

const GZIP: &[u8] = &[0x1f, 0x8b];
const XZ: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

/// Open `path` for line reading, decompressing gzip, xz or zstd.
pub fn open(path: &str) -> Result<Box<dyn BufRead + Send>> {
    let file =
        File::open(path).map_err(|e| Error::trace(path, None, format!("cannot open: {e}")))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let head = reader
        .fill_buf()
        .map_err(|e| Error::trace(path, None, format!("cannot read: {e}")))?
        .to_vec();
    let big = |r: Box<dyn Read + Send>| -> Box<dyn BufRead + Send> {
        Box::new(BufReader::with_capacity(1 << 20, r))
    };
    Ok(if head.starts_with(GZIP) {
        big(Box::new(flate2::read::MultiGzDecoder::new(reader)))
    } else if head.starts_with(XZ) {
        big(Box::new(liblzma::read::XzDecoder::new_multi_decoder(
            reader,
        )))
    } else if head.starts_with(ZSTD) {
        let dec = zstd::stream::read::Decoder::with_buffer(reader)
            .map_err(|e| Error::trace(path, None, format!("bad zstd stream: {e}")))?;
        big(Box::new(dec))
    } else {
        Box::new(reader)
    })
}
