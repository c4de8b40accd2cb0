//! `Core::from_bytes` and `Binary::from_bytes` (used by the `native` fuzz
//! target): the same readers as from a file, errors naming the given name.

use postmortem_formats::image::native::{Binary, Core};
use std::path::Path;

#[test]
fn a_binary_from_its_bytes_has_its_symbols() {
    let exe = std::env::current_exe().unwrap();
    let bytes = std::fs::read(&exe).unwrap();
    let b = Binary::from_bytes(bytes, Path::new("self")).unwrap();
    assert!(b.func_at(b.entry).is_some() || b.func_named("_start").is_some());
    // Not a core.
    let e = Core::from_bytes(std::fs::read(&exe).unwrap(), Path::new("self"))
        .err()
        .unwrap();
    assert!(e.0.starts_with("self: not a core dump"), "{e}");
}

#[test]
fn garbage_is_one_error_line_naming_the_input() {
    for data in [&b""[..], b"\x7fELF", &[0u8; 100]] {
        let e = Binary::from_bytes(data.to_vec(), Path::new("prog"))
            .err()
            .unwrap();
        assert!(e.0.starts_with("prog: not an ELF binary"), "{e}");
        let e = Core::from_bytes(data.to_vec(), Path::new("core"))
            .err()
            .unwrap();
        assert!(e.0.starts_with("core: not a 64-bit ELF core"), "{e}");
        assert_eq!(e.0.lines().count(), 1);
    }
}
