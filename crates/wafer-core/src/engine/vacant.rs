//! The placeholders of an engine decoded from a checkpoint.

/// Stands in for the placement policy and the victim selector of an engine
/// decoded from a checkpoint, until the run's own (built from the same
/// configuration, then loaded with their saved states) take their place in
/// [`super::Engine::load_state`]. It never sees a request.
struct Vacant;

impl super::placement::Placement for Vacant {
    fn name(&self) -> &'static str {
        "vacant"
    }
    fn groups(&self) -> usize {
        1
    }
    fn place_user(
        &mut self,
        _ctx: &super::placement::Ctx,
        _writes: &[super::placement::UserWrite],
        out: &mut [crate::ftl::GroupId],
    ) {
        out.fill(0);
    }
    fn place_gc(
        &mut self,
        _ctx: &super::placement::Ctx,
        _b: &super::placement::GcBlock,
    ) -> crate::ftl::GroupId {
        0
    }
}

impl crate::victim::VictimSelector for Vacant {
    fn name(&self) -> &'static str {
        "vacant"
    }
    fn on_seal(&mut self, _seg: crate::ftl::SegmentId, _ftl: &crate::ftl::Ftl) {}
    fn select(&mut self, _ftl: &crate::ftl::Ftl, _max_valid: u32) -> Option<crate::ftl::SegmentId> {
        None
    }
    fn remove(&mut self, _seg: crate::ftl::SegmentId, _ftl: &crate::ftl::Ftl) {}
    fn memory_bytes(&self) -> usize {
        0
    }
}

/// The placeholder policy of a decoding engine.
pub(crate) fn policy() -> Box<dyn super::placement::Placement> {
    Box::new(Vacant)
}

/// The placeholder victim selector of a decoding engine.
pub(crate) fn selector() -> Box<dyn crate::victim::VictimSelector> {
    Box::new(Vacant)
}
