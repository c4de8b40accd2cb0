//! The ELF core and binary readers (`postmortem_formats::native`):
//! arbitrary bytes never panic, and neither do the checks and the unwinder
//! that combine a core with a binary.
//!
//! Input: 4 bytes (little-endian length of the core part, taken modulo
//! what is left), the core's bytes, then the binary's bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use postmortem_formats::native::{self, Binary, Core};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (head, rest) = data.split_at(4);
    let n = u32::from_le_bytes(head.try_into().unwrap()) as usize % (rest.len() + 1);
    let (core, bin) = rest.split_at(n);
    let core = Core::from_bytes(core.to_vec(), Path::new("core"));
    let bin = Binary::from_bytes(bin.to_vec(), Path::new("prog"));
    if let Ok(c) = &core {
        let _ = (
            c.mem(0, 8),
            c.mem(u64::MAX - 3, 8),
            c.auxv.len(),
            c.files.len(),
        );
        for (a, _) in c.auxv.iter().take(4) {
            let _ = c.mem(*a, 64);
        }
    }
    if let Ok(b) = &bin {
        let _ = b.pcs();
        let entry = b.entry;
        let _ = (b.func_at(entry), b.bytes_at(entry, 16), b.symbolize(entry));
        let _ = b.func_named("main");
        if let Some(pcs) = b.pcs() {
            // A layout of one array per function entry in the table.
            let mut arrays: Vec<(Option<String>, usize)> = Vec::new();
            for &(pc, flags) in &pcs {
                if flags & 1 == 1 || arrays.is_empty() {
                    arrays.push((b.func_at(pc).map(|f| f.name.clone()), 0));
                }
                arrays.last_mut().unwrap().1 += 1;
            }
            let _ = native::check_order(b, &pcs, &arrays);
        }
    }
    if let (Ok(c), Ok(b)) = (&core, &bin) {
        let _ = native::read_flags(c, b);
        if let Ok(base) = native::load_base(c, b) {
            let _ = native::unwind(c, b, base);
        }
    }
});
