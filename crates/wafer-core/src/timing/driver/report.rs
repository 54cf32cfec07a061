//! What a timed replay measured, gathered into its result
//! ([`TimingResult`]): latency, throughput, utilisation, waits, hit rates,
//! flash counts, energy (AutoBlox, ASPLOS'23 §3.5, with its artifact's constants in `evaluate_target_conf.py`) and the time series.

use super::super::flash::{Class, CLASS_NAMES};
use super::super::result::*;
use super::Driver;

impl Driver {
    /// Everything measured so far.
    pub fn result(&self) -> TimingResult {
        let ssd = &self.run.ssd;
        let t = self.now.max(1);
        // Rates over the requests' phase; busy shares and energy over all
        // the simulated time (the end's flush included).
        let end = self.flush.map_or(self.now, |f| f.start);
        let secs = end as f64 * 1e-9;
        let all_secs = self.now as f64 * 1e-9;
        let frac = |ns: u64| ns as f64 / t as f64;
        let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let fs = self.flash.stats();
        let cache = self.cache.counts();
        let map = self.map.counts();
        let chans: Vec<f64> = self.flash.channel_busy().into_iter().map(frac).collect();
        let dies: Vec<f64> = self.flash.die_busy().into_iter().map(frac).collect();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let requests = self.requests_done();
        let bytes = self.c.read_bytes + self.c.write_bytes;
        // Energy (AutoBlox, ASPLOS'23 §3.5, with its artifact's constants in `evaluate_target_conf.py`).
        let e = &ssd.energy;
        let bits = self.page_bytes as f64 * 8.0;
        let flash_read_j = fs.reads as f64 * bits * e.read_nj_per_bit * 1e-9;
        let flash_program_j = fs.programs as f64 * bits * e.program_nj_per_bit * 1e-9;
        let flash_erase_j =
            fs.erases as f64 * bits * self.fit.slice as f64 * e.erase_nj_per_bit * 1e-9;
        let idle_ns: u64 = self
            .flash
            .chip_busy(self.now)
            .iter()
            .map(|&b| self.now.saturating_sub(b))
            .sum();
        let flash_idle_j = idle_ns as f64 * 1e-9 * e.idle_mw_per_chip * 1e-3;
        let channel_j = fs.channel_bytes as f64 * e.channel_pj_per_byte * 1e-12;
        let dram_j = all_secs * e.dram_mw * 1e-3
            + self.dram.bytes() as f64 * 8.0 * e.dram_pj_per_bit * 1e-12;
        let controller_j = all_secs * e.controller_mw * 1e-3;
        let total_j = flash_read_j
            + flash_program_j
            + flash_erase_j
            + flash_idle_j
            + channel_j
            + dram_j
            + controller_j;
        let mut waits = Waits {
            host_queue_mean_us: self.intake.queue_wait_mean_ns() / 1e3,
            host_queue_max_us: self.intake.queue_wait_max_ns() as f64 / 1e3,
            cache_waits: cache.waits,
            programs_parked: fs.parked,
            ..Default::default()
        };
        let mut by_class = std::collections::BTreeMap::new();
        for (c, name) in CLASS_NAMES.iter().enumerate() {
            let name = name.to_string();
            by_class.insert(name.clone(), fs.ops[c]);
            let n = fs.ops[c].max(1);
            waits
                .flash_mean_us
                .insert(name.clone(), fs.wait_sum[c] as f64 / n as f64 / 1e3);
            waits.flash_max_us.insert(name, fs.wait_max[c] as f64 / 1e3);
        }
        let user_programs = fs.ops[Class::UserWrite as usize];
        let cache_total =
            cache.read_hits + cache.read_misses + cache.write_hits + cache.write_misses;
        let cmt_total = map.hits + map.misses;
        let mut windows = self.windows.clone();
        if requests > self.mark.requests {
            // the last, partial window
            let mut tmp = TimingWindow {
                window: self.engine_windows,
                end_seconds: secs,
                requests: requests - self.mark.requests,
                read_mean_us: self.win_read.mean() / 1e3,
                read_p99_us: self.win_read.quantile(0.99) / 1e3,
                write_mean_us: self.win_write.mean() / 1e3,
                write_p99_us: self.win_write.quantile(0.99) / 1e3,
                ..Default::default()
            };
            let ws = (self.now - self.mark.time) as f64 * 1e-9;
            if ws > 0.0 {
                tmp.iops = tmp.requests as f64 / ws;
                tmp.bandwidth_bytes_per_s = (bytes - self.mark.bytes) as f64 / ws;
            }
            let user = user_programs - self.mark.user_programs;
            tmp.flash_waf =
                (user > 0).then(|| (fs.programs - self.mark.programs) as f64 / user as f64);
            windows.push(tmp);
        }
        let all_ops: u64 = fs.ops.iter().sum();
        TimingResult {
            preset: ssd.name.clone(),
            arrival: format!("{:?}", self.run.arrival).to_lowercase(),
            queue_depth: self.run.queue_depth,
            slice_pages: self.fit.slice,
            erase_us: self.flash.erase_ns() as f64 / 1e3,
            precondition_writes: self.pre.writes,
            precondition_seconds: self.pre.seconds,
            precondition_workload: self.pre.workload.clone(),
            precondition_cache: None,
            flush: self.flush.map(|f| Flush {
                pages: f.pages,
                seconds: (self.now - f.start) as f64 * 1e-9,
                programs: fs.programs - f.programs_before,
                user_programs: user_programs - f.user_before,
            }),
            fit_device: self.run.fit_device,
            cache: CacheEnd {
                capacity_pages: self.cache.capacity() as u64,
                dirty_pages_at_end: self.cache.dirty_count(),
            },
            simulated_seconds: secs,
            arrived: self.intake.arrived(),
            requests,
            reads: self.c.reads,
            writes: self.c.writes,
            trims: self.c.trims,
            read_bytes: self.c.read_bytes,
            write_bytes: self.c.write_bytes,
            read_latency: Latency {
                device: self.read_dev.summary(),
                end_to_end: self.read_e2e.summary(),
            },
            write_latency: Latency {
                device: self.write_dev.summary(),
                end_to_end: self.write_e2e.summary(),
            },
            throughput: Throughput {
                iops: per_s(requests as f64),
                read_iops: per_s(self.c.reads as f64),
                write_iops: per_s(self.c.writes as f64),
                bandwidth_bytes_per_s: per_s(bytes as f64),
                read_bandwidth_bytes_per_s: per_s(self.c.read_bytes as f64),
                write_bandwidth_bytes_per_s: per_s(self.c.write_bytes as f64),
            },
            utilisation: Utilisation {
                channel_mean: mean(&chans),
                channel_max: chans.iter().copied().fold(0.0, f64::max),
                die_mean: mean(&dies),
                die_min: dies.iter().copied().fold(f64::INFINITY, f64::min).min(1.0),
                die_max: dies.iter().copied().fold(0.0, f64::max),
                channels: chans,
                dies,
                host_link_down: frac(self.host.down_busy_ns()),
                host_link_up: frac(self.host.up_busy_ns()),
                dram: frac(self.dram.busy_ns()),
            },
            waits,
            hits: Hits {
                cache_read_hits: cache.read_hits,
                cache_read_misses: cache.read_misses,
                cache_write_hits: cache.write_hits,
                cache_write_misses: cache.write_misses,
                cache_hit_rate: (cache_total > 0)
                    .then(|| (cache.read_hits + cache.write_hits) as f64 / cache_total as f64),
                cmt_hits: map.hits,
                cmt_misses: map.misses,
                cmt_merged_misses: map.merged_misses,
                cmt_hit_rate: (cmt_total > 0).then(|| map.hits as f64 / cmt_total as f64),
            },
            flash: FlashCounts {
                by_class,
                reads: fs.reads,
                user_programs,
                gc_programs: fs.ops[Class::GcWrite as usize],
                mapping_programs: map.programs,
                mapping_reads: map.reads,
                mapping_write_backs: map.write_backs,
                mapping_entries_written_back: map.entries_written_back,
                mapping_cleaning_moves: map.cleaning_moves,
                erases: fs.erases,
                copybacks: self.c.copybacks,
                multiplane_batches: fs.multiplane,
                batches: fs.batches,
                suspended_programs: fs.suspended_programs,
                suspended_erases: fs.suspended_erases,
                rmw_reads: self.c.rmw_reads,
                unmapped_reads: self.c.unmapped_reads,
                programs_by_page_type: fs.programs_by_type[..ssd.flash.technology.page_types()]
                    .to_vec(),
            },
            waf_with_mapping: (user_programs > 0)
                .then(|| fs.programs as f64 / user_programs as f64),
            host_waf: (self.c.host_pages_written > 0)
                .then(|| fs.programs as f64 / self.c.host_pages_written as f64),
            energy: Energy {
                flash_read_j,
                flash_program_j,
                flash_erase_j,
                flash_idle_j,
                channel_j,
                dram_j,
                controller_j,
                total_j,
                average_power_w: if all_secs > 0.0 {
                    total_j / all_secs
                } else {
                    0.0
                },
                per_request_j: (requests > 0).then(|| total_j / requests as f64),
                per_byte_j: (bytes > 0).then(|| total_j / bytes as f64),
            },
            windows,
            requests_per_wall_second: if self.wall > 0.0 {
                requests as f64 / self.wall
            } else {
                0.0
            },
            flash_ops_per_wall_second: if self.wall > 0.0 {
                all_ops as f64 / self.wall
            } else {
                0.0
            },
            wall_seconds: self.wall,
            idle_periods: self.c.idle_periods,
            invariant_violations: self.c.violations + self.flash.busy_violations(),
        }
    }
}
