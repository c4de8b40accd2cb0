//! Fields of aggregate globals as variables (`values.rs`): byte offsets
//! by the x86-64 layout, exact on nested structs and arrays; aggregates
//! used otherwise (a variable index, a call, a cast) and types not laid
//! out with certainty (packed structs, floats) are left out whole.

use postmortem_llvm::load_ir_str;

const IR: &str = r#"
%struct.inner = type { i16, i64 }
%struct.outer = type { i8, %struct.inner, [3 x i32], i32* }

@o = dso_local global %struct.outer zeroinitializer, align 8
@arr = dso_local global [4 x i16] [i16 1, i16 2, i16 3, i16 4], align 2
@packed = dso_local global <{ i8, i32 }> zeroinitializer, align 1
@flt = dso_local global { float, i32 } zeroinitializer, align 4
@indexed = dso_local global [4 x i32] zeroinitializer, align 16
@passed = dso_local global [2 x i32] zeroinitializer, align 4

declare void @use(i32*)

define dso_local void @main(i64 %i) {
entry:
  store i32 7, i32* getelementptr inbounds (%struct.outer, %struct.outer* @o, i64 0, i32 2, i64 1), align 4
  store i64 9, i64* getelementptr inbounds (%struct.outer, %struct.outer* @o, i64 0, i32 1, i32 1), align 8
  %p = getelementptr inbounds %struct.outer, %struct.outer* @o, i64 0, i32 3
  store i32* null, i32** %p, align 8
  store i16 5, i16* getelementptr inbounds ([4 x i16], [4 x i16]* @arr, i64 0, i64 3), align 2
  store i32 1, i32* getelementptr inbounds (<{ i8, i32 }>, <{ i8, i32 }>* @packed, i64 0, i32 1), align 1
  store i32 1, i32* getelementptr inbounds ({ float, i32 }, { float, i32 }* @flt, i64 0, i32 1), align 4
  store i32 1, i32* getelementptr inbounds ([4 x i32], [4 x i32]* @indexed, i64 0, i64 1), align 4
  %q = getelementptr inbounds [4 x i32], [4 x i32]* @indexed, i64 0, i64 %i
  store i32 2, i32* %q, align 4
  store i32 1, i32* getelementptr inbounds ([2 x i32], [2 x i32]* @passed, i64 0, i64 0), align 4
  call void @use(i32* getelementptr inbounds ([2 x i32], [2 x i32]* @passed, i64 0, i64 1))
  ret void
}

; Another function's %p is another value: no write to o.3.
define dso_local void @h(i32** %p) {
entry:
  store i32* null, i32** %p, align 8
  ret void
}
"#;

#[test]
fn fields_of_globals_have_their_layout_offsets() {
    let loaded = load_ir_str(IR, "fields.ll").unwrap();
    let vars = loaded.vars.expect("a variable map");
    let mut got: Vec<(String, u32, u32, bool, usize)> = vars
        .vars
        .iter()
        .map(|v| (v.name.clone(), v.offset, v.bytes, v.pointer, v.writes.len()))
        .collect();
    got.sort();
    let want = vec![
        // arr: [4 x i16], element 3 at 6.
        ("arr[3]".to_string(), 6, 2, false, 1),
        // outer: i8 at 0, inner (align 8) at 8: its i64 at 16; the array
        // at 24, element 1 at 28; the pointer at 40.
        ("o.1.1".to_string(), 16, 8, false, 1),
        ("o.2[1]".to_string(), 28, 4, false, 1),
        ("o.3".to_string(), 40, 8, true, 1),
    ];
    assert_eq!(got, want, "{:?}", vars.left_out);
    let init: Vec<_> = vars
        .vars
        .iter()
        .map(|v| match &v.scope {
            postmortem_formats::vars::VarScope::Global { init, .. } => *init,
            _ => panic!("a global"),
        })
        .collect();
    assert!(init.iter().all(|i| i.is_some()), "{init:?}");
    let arr = vars.vars.iter().position(|v| v.name == "arr[3]").unwrap();
    assert_eq!(init[arr], Some(4), "arr's initializer, element 3");
    // Left out whole: a variable index, a pointer passed to a call; a
    // packed struct and a float are not laid out (not scalars either).
    assert_eq!(
        vars.left_out
            .get("global struct or array whose address escapes"),
        Some(&2),
        "{:?}",
        vars.left_out
    );
    assert_eq!(
        vars.left_out.get("global that is not a scalar"),
        Some(&2),
        "{:?}",
        vars.left_out
    );
}
