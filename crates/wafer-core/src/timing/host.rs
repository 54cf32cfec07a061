//! Host interface and DRAM timing (MQSim, Tavakkol et al. FAST'18: its `Host_Interface_NVMe`/`SATA` and `Data_Cache_Manager_Flash_Advanced`).
//!
//! Links and the DRAM bus are "next-free-time" resources: each reservation
//! starts when both the caller and the resource are ready, in the order the
//! driver makes them (event-time order). Only data payloads hold a link;
//! the small control messages (doorbell, SQE fetch, CQE; SATA FISes) add
//! their wire time to the request but do not hold the link.

use super::config::{Interface, SsdConfig};

/// A serial resource reserved in FIFO order.
#[derive(Clone, Debug, Default)]
pub struct Bus {
    free_at: u64,
    /// Time spent transferring [ns].
    busy_ns: u64,
}

impl Bus {
    /// Reserve `dur` ns starting no earlier than `t`; returns the end.
    #[inline]
    pub fn reserve(&mut self, t: u64, dur: u64) -> u64 {
        let start = self.free_at.max(t);
        self.free_at = start + dur;
        self.busy_ns += dur;
        self.free_at
    }

    /// Time spent transferring so far [ns].
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }
}

/// The host link and the command protocol's fixed costs.
#[derive(Clone, Debug)]
pub struct Host {
    /// Protocol.
    interface: Interface,
    /// Host -> device data (SATA: the one half-duplex link).
    down: Bus,
    /// Device -> host data (NVMe only).
    up: Bus,
    lanes: f64,
    gbps: f64,
    max_payload: u64,
    overhead: u64,
    /// From arrival in the submission queue to the command at the device
    /// (NVMe: doorbell write, SQE fetch request and SQE; SATA: processing
    /// delay and command FIS) [ns].
    submit_ns: u64,
    /// A DMA read request before write data flows (NVMe) [ns].
    dma_request_ns: u64,
    /// From the device's completion to the host seeing it (NVMe: CQE; SATA:
    /// processing delay and status FIS) [ns].
    complete_ns: u64,
    sata_delay: u64,
    /// Link time of a 4 KiB transfer, the common request size (the general
    /// formula runs two floating-point roundings per request) [ns].
    ns_4k: u64,
}

/// The transfer size whose link time is kept.
const BYTES_4K: u64 = 4096;

impl Host {
    /// The host side of `ssd`.
    pub fn new(ssd: &SsdConfig) -> Host {
        let h = &ssd.host;
        let mut host = Host {
            interface: h.interface,
            down: Bus::default(),
            up: Bus::default(),
            lanes: h.pcie_lanes as f64,
            gbps: h.pcie_lane_gbps,
            max_payload: h.pcie_max_payload_bytes as u64,
            overhead: h.pcie_tlp_overhead_bytes as u64,
            submit_ns: 0,
            dma_request_ns: 0,
            complete_ns: 0,
            sata_delay: h.sata_delay_ns,
            ns_4k: 0,
        };
        match h.interface {
            Interface::Nvme => {
                // Doorbell (4 B posted write), SQE fetch: read request (a
                // header, MQSim's 32 B) and the 64 B SQE in a completion.
                host.dma_request_ns = host.wire_ns_bytes(32);
                host.submit_ns = host.pcie_ns(4) + host.dma_request_ns + host.pcie_ns(64);
                host.complete_ns = host.pcie_ns(16);
            }
            Interface::Sata => {
                host.gbps = h.sata_link_gbps;
                host.lanes = 1.0;
                // Register FIS (20 B) each way, plus the processing delay.
                host.submit_ns = h.sata_delay_ns + host.sata_ns(20);
                host.complete_ns = h.sata_delay_ns + host.sata_ns(20);
            }
        }
        host.ns_4k = host.link_ns(BYTES_4K);
        host
    }

    /// Bytes on the wire for a `payload`-byte transfer: TLPs of at most the
    /// maximum payload, each with its header overhead (§2.2).
    pub fn pcie_wire_bytes(&self, payload: u64) -> u64 {
        let full = payload / self.max_payload;
        let rest = payload % self.max_payload;
        full * (self.max_payload + self.overhead) + if rest > 0 { rest + self.overhead } else { 0 }
    }

    fn wire_ns_bytes(&self, wire: u64) -> u64 {
        ((wire as f64 / self.lanes).ceil() / self.gbps).round() as u64
    }

    /// PCIe time of a `payload`-byte transfer [ns]: ceil(wire / lanes) / rate.
    pub fn pcie_ns(&self, payload: u64) -> u64 {
        self.wire_ns_bytes(self.pcie_wire_bytes(payload))
    }

    fn sata_ns(&self, bytes: u64) -> u64 {
        (bytes as f64 / self.gbps).round() as u64
    }

    /// Link time of `bytes` of data [ns].
    #[inline]
    pub fn data_ns(&self, bytes: u64) -> u64 {
        if bytes == BYTES_4K {
            self.ns_4k
        } else {
            self.link_ns(bytes)
        }
    }

    fn link_ns(&self, bytes: u64) -> u64 {
        match self.interface {
            Interface::Nvme => self.pcie_ns(bytes),
            Interface::Sata => self.sata_ns(bytes),
        }
    }

    /// When a command entering the submission queue at `t` is at the
    /// device [ns].
    #[inline]
    pub fn command_at(&self, t: u64) -> u64 {
        t + self.submit_ns
    }

    /// When the host sees a completion the device posts at `t` [ns].
    #[inline]
    pub fn completion_at(&self, t: u64) -> u64 {
        t + self.complete_ns
    }

    /// Time the host -> device link (SATA: the link) spent transferring
    /// [ns].
    pub fn down_busy_ns(&self) -> u64 {
        self.down.busy_ns
    }

    /// Time the device -> host link spent transferring (NVMe only) [ns].
    pub fn up_busy_ns(&self) -> u64 {
        self.up.busy_ns
    }

    /// SATA's processing delay [ns] (0 for NVMe).
    pub fn sata_delay(&self) -> u64 {
        self.sata_delay
    }

    /// Host -> device data of a write, starting at `t`; returns when it is
    /// at the device.
    #[inline]
    pub fn write_data(&mut self, t: u64, bytes: u64) -> u64 {
        let dur = self.data_ns(bytes);
        match self.interface {
            Interface::Nvme => self.down.reserve(t + self.dma_request_ns, dur),
            Interface::Sata => self.down.reserve(t, dur),
        }
    }

    /// Device -> host data of a read, starting at `t`; returns its end.
    #[inline]
    pub fn read_data(&mut self, t: u64, bytes: u64) -> u64 {
        let dur = self.data_ns(bytes);
        match self.interface {
            Interface::Nvme => self.up.reserve(t, dur),
            Interface::Sata => self.down.reserve(t, dur),
        }
    }
}

/// DRAM access time (MQSim's `estimate_dram_access_time`, §2.4).
#[derive(Clone, Debug)]
pub struct Dram {
    /// The one DRAM channel.
    bus: Bus,
    trcd: u64,
    tcl: u64,
    trp: u64,
    row: u64,
    burst: f64,
    period: f64,
    /// Bytes moved.
    bytes: u64,
}

impl Dram {
    /// The DRAM of `ssd`'s cache.
    pub fn new(ssd: &SsdConfig) -> Dram {
        let c = &ssd.cache;
        Dram {
            bus: Bus::default(),
            trcd: c.dram_trcd_ns,
            tcl: c.dram_tcl_ns,
            trp: c.dram_trp_ns,
            row: c.dram_row_bytes as u64,
            burst: c.dram_burst_bytes as f64,
            period: 1000.0 / c.dram_rate_mts,
            bytes: 0,
        }
    }

    /// Time of one access of `bytes` [ns]: tRCD + tCL + (bytes / burst / 2)
    /// cycles per row touched, tRP between rows.
    pub fn access_ns(&self, bytes: u64) -> u64 {
        let xfer = |b: u64| (b as f64 / self.burst / 2.0 * self.period).round() as u64;
        if bytes <= self.row {
            return self.trcd + self.tcl + xfer(bytes);
        }
        let rows = bytes.div_ceil(self.row);
        let last = bytes - (rows - 1) * self.row;
        (rows - 1) * (self.trcd + self.tcl + xfer(self.row) + self.trp)
            + self.trcd
            + self.tcl
            + xfer(last)
    }

    /// An access of `bytes` starting no earlier than `t`; returns its end.
    #[inline]
    pub fn access(&mut self, t: u64, bytes: u64) -> u64 {
        self.bytes += bytes;
        let d = self.access_ns(bytes);
        self.bus.reserve(t, d)
    }

    /// Time the DRAM channel spent transferring [ns].
    pub fn busy_ns(&self) -> u64 {
        self.bus.busy_ns
    }

    /// Bytes moved so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_matches_the_spec_example() {
        // 4 KiB on x4 at 1 GB/s: 4992 wire bytes, 1248 ns (PCIe 3.0 framing as MQSim's `PCIe_Link` counts it).
        let h = Host::new(&SsdConfig::load("intel750").unwrap());
        assert_eq!(h.pcie_wire_bytes(4096), 4992);
        assert_eq!(h.pcie_ns(4096), 1248);
        assert_eq!(h.pcie_wire_bytes(130), 128 + 28 + 2 + 28);
    }

    #[test]
    fn dram_matches_the_spec_example() {
        // 4 KiB on the Intel 750's DDR-2133, burst 8, tRCD + tCL 28 ns: ~148 ns.
        let d = Dram::new(&SsdConfig::load("intel750").unwrap());
        assert_eq!(d.access_ns(4096), 28 + 120);
        // two rows: one tRP between them
        assert_eq!(d.access_ns(8192), 2 * 148 + 14);
    }

    #[test]
    fn a_bus_serialises_in_order() {
        let mut b = Bus::default();
        assert_eq!(b.reserve(10, 5), 15);
        assert_eq!(b.reserve(12, 5), 20);
        assert_eq!(b.reserve(30, 1), 31);
        assert_eq!(b.busy_ns, 11);
    }
}
