; Indirect calls: every address-taken function of a compatible type, the
; count of resolved calls, and callbacks passed to library functions. No
; debug info, so ids are FUNC:0:0, FUNC:0:0#2, ...
;
; Address-taken: a, p (in @table), b, two, dbl, v, va, cmp and the
; declaration free (in main). notaken is compatible but only called
; directly.
;   %f(i32) -> i32      : a, b, v (void return), va (variadic)       [resolved]
;   %g(i8*) -> void     : p, and free (a declaration: falls through) [resolved]
;   %h(float) -> void   : nothing: treated as external               [unresolved]
;   qsort(..., @cmp)    : callback edge to cmp, and falls through
source_filename = "indirect.c"

@table = internal global [2 x i32 (i32)*] [i32 (i32)* @a, i32 (i32)* bitcast (i32 (i8*)* @p to i32 (i32)*)]

define i32 @a(i32 %x) {
  ret i32 %x
}

define i32 @b(i32 %x) {
  ret i32 %x
}

define void @v(i32 %x) {
  ret void
}

define i32 @two(i32 %x, i32 %y) {
  ret i32 %x
}

define i32 @dbl(double %x) {
  ret i32 0
}

define i32 @notaken(i32 %x) {
  ret i32 %x
}

define i32 @p(i8* %s) {
  ret i32 0
}

define i32 @va(i32 %x, ...) {
  ret i32 0
}

define i32 @cmp(i8* %l, i8* %r) {
  ret i32 0
}

declare void @free(i8*)
declare void @qsort(i8*, i64, i64, i32 (i8*, i8*)*)

define i32 @main() {
  %slot = alloca i32 (i32)*
  %any = alloca i8*
  store i32 (i32)* @b, i32 (i32)** %slot
  store i8* bitcast (i32 (i32, i32)* @two to i8*), i8** %any
  store i8* bitcast (i32 (double)* @dbl to i8*), i8** %any
  store i8* bitcast (void (i32)* @v to i8*), i8** %any
  store i8* bitcast (i32 (i32, ...)* @va to i8*), i8** %any
  store i8* bitcast (void (i8*)* @free to i8*), i8** %any
  %d = call i32 @notaken(i32 1)
  %f = load i32 (i32)*, i32 (i32)** %slot
  %r = call i32 %f(i32 %d)
  %g = bitcast i32 (i32)* %f to void (i8*)*
  call void %g(i8* null)
  %h = bitcast i32 (i32)* %f to void (float)*
  call void %h(float 0.0)
  call void @qsort(i8* null, i64 0, i64 0, i32 (i8*, i8*)* @cmp)
  ret i32 %r
}
