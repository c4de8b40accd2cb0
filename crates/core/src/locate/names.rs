//! Function names: the keys a name is looked up by, and the names a
//! library function may carry in call notes.

/// The keys a function name is looked up by, most specific first: the
/// name itself, the name without its parameter list and trailing
/// qualifiers (`ns::f(int) const` -> `ns::f`), that without the return
/// type a C++ template function's demangled name starts with (`void
/// ns::f<int>(int)` -> `ns::f<int>`, as debuggers print it), and without
/// a Rust hash (`app::f::h0123456789abcdef` -> `app::f`).
pub fn name_keys(name: &str) -> Vec<String> {
    let mut keys = Vec::with_capacity(3);
    let name = name.trim();
    if name.is_empty() {
        return keys;
    }
    keys.push(name.to_string());
    let no_params = strip_params(name);
    if no_params != name && !no_params.is_empty() {
        keys.push(no_params.to_string());
        let no_return = strip_return_type(no_params);
        if no_return != no_params {
            keys.push(no_return.to_string());
        }
    }
    let base = keys.last().expect("one key").clone();
    let no_hash = strip_rust_hash(&base);
    if no_hash != base && !no_hash.is_empty() {
        keys.push(no_hash.to_string());
    }
    keys
}

/// `ns::f(int, char*) const` -> `ns::f`. Leaves names without a trailing
/// parameter list alone; never strips a group that starts the name
/// (`(anonymous namespace)`).
fn strip_params(name: &str) -> &str {
    let mut s = name.trim_end();
    // Trailing qualifiers after the parameter list.
    loop {
        let before = s;
        for q in ["const", "volatile", "&&", "&", "noexcept"] {
            if let Some(r) = s.strip_suffix(q) {
                if q.starts_with('&') || r.ends_with([' ', ')']) {
                    s = r.trim_end();
                }
            }
        }
        if s == before {
            break;
        }
    }
    if !s.ends_with(')') {
        return name;
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let head = s[..i].trim_end();
                    return if head.is_empty() || head.ends_with("::") {
                        name
                    } else {
                        head
                    };
                }
            }
            _ => {}
        }
    }
    name
}

/// `void ns::f<int>` -> `ns::f<int>`: the Itanium mangling of a template
/// function encodes its return type, which demanglers print first and
/// debuggers leave out. Only for a name that ends with template
/// arguments; the name is what follows the last space outside brackets
/// before an `operator` (`bool ns::operator< <int>` -> `ns::operator<
/// <int>`, `ns::S::operator int` has no template arguments).
fn strip_return_type(name: &str) -> &str {
    if !name.ends_with('>') {
        return name;
    }
    let stop = name.find("operator").unwrap_or(name.len());
    let mut depth = 0usize;
    let mut last = None;
    for (i, c) in name[..stop].char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 => last = Some(i),
            _ => {}
        }
    }
    match last {
        Some(i) if !name[i + 1..].is_empty() => &name[i + 1..],
        _ => name,
    }
}

/// `app::f::h0123456789abcdef` -> `app::f`.
fn strip_rust_hash(name: &str) -> &str {
    if let Some((head, tail)) = name.rsplit_once("::") {
        if tail.len() == 17
            && tail.starts_with('h')
            && tail[1..].bytes().all(|b| b.is_ascii_hexdigit())
        {
            return head;
        }
    }
    name
}

/// Names a library function may carry in call notes, given the name a
/// backtrace printed: the name itself (without parameters), and without
/// glibc / sanitizer prefixes (`__GI_raise` -> `raise`,
/// `__interceptor_strlen` -> `strlen`, `__strlen_avx2` -> `strlen`).
pub(super) fn library_name_keys(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let base = strip_params(name.trim());
    if base.is_empty() {
        return out;
    }
    // Every prefix stripping, one after the other:
    // `__GI___assert_fail` -> `__assert_fail` -> `assert_fail`.
    let mut s = base;
    loop {
        let mut v = s;
        // glibc's IFUNC variants: `strlen_avx2`, `memcpy_evex_unaligned_erms`.
        for suffix in [
            "_avx2",
            "_avx",
            "_sse2",
            "_sse4",
            "_evex",
            "_erms",
            "_ssse3",
            "_unaligned",
        ] {
            if let Some(i) = v.find(suffix).filter(|&i| i > 0) {
                v = &v[..i];
            }
        }
        for k in [s, v] {
            if !k.is_empty() && !out.iter().any(|o| o == k) {
                out.push(k.to_string());
            }
        }
        match [
            "___interceptor_",
            "__interceptor_",
            "__GI_",
            "__libc_",
            "__",
        ]
        .iter()
        .find_map(|p| s.strip_prefix(p))
        {
            Some(r) if !r.is_empty() => s = r,
            _ => break,
        }
    }
    out
}
