//! Property tests: FTL invariants hold after any sequence of writes, trims and
//! reads, under every policy (the learned ones: wafer-learn's tests) and victim selector; WAF >= 1; accounting adds up.

use proptest::prelude::*;
use wafer_core::engine::Engine;
use wafer_core::{policy, victim, DeviceConfig, GcMode, Op, Request};

fn op() -> impl Strategy<Value = (u8, u64, u32)> {
    (0u8..10, 0u64..600, 1u32..20)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_for_random_operation_sequences(
        ops in prop::collection::vec(op(), 1..3000),
        pol in prop::sample::select(policy::REGISTRY.iter().filter(|p| p.family != policy::Family::Learned).map(|p| p.name).collect::<Vec<_>>()),
        vic in prop::sample::select(vec!["greedy", "cost-benefit", "fifo", "cat", "d-choices", "d-choices:2"]),
        seg in prop::sample::select(vec![4u32, 7, 16]),
        op_ratio in 0.2f64..0.6,
        prefill in any::<bool>(),
        log_structured in any::<bool>(),
    ) {
        let gc_mode = if log_structured { GcMode::GarbageProportion } else { GcMode::Watermark };
        let cfg = DeviceConfig { logical_blocks: 600, op: op_ratio, segment_blocks: seg, prefill, check_every: 97, gc_mode, ..Default::default() };
        let geo = cfg.geometry().unwrap();
        let built = Engine::new(&cfg, geo, policy::build(pol, &serde_json::Value::Null, &geo).unwrap(), victim::build(vic, &geo, 3).unwrap());
        // Too small for this policy's groups: a config error, checked elsewhere.
        let Ok(mut e) = built else {
            let is_config = matches!(built, Err(wafer_core::Error::Config { .. }));
            prop_assert!(is_config, "only a config error may refuse a device");
            return Ok(());
        };
        if prefill { e.prefill().unwrap(); }
        let mut mapped = vec![prefill; 600];
        let mut writes = 0u64;
        for (kind, lba, len) in ops {
            let len = len.min((600 - lba) as u32);
            let op = match kind { 0 => Op::Trim, 1 => Op::Read, _ => Op::Write };
            e.submit(&Request { time_ns: 0, lba, blocks: len, op, tenant: 0 }).unwrap();
            for l in lba..lba + len as u64 {
                match op { Op::Trim => mapped[l as usize] = false, Op::Write => { mapped[l as usize] = true; writes += 1 }, Op::Read => {} }
            }
        }
        e.check().unwrap();
        for (l, &m) in mapped.iter().enumerate() {
            prop_assert_eq!(e.ftl.lookup(l as u32).is_some(), m);
        }
        prop_assert_eq!(e.stats.c.user_writes, writes);
        prop_assert_eq!(e.stats.c.victim_valid_blocks, e.stats.c.gc_writes);
    }
}
