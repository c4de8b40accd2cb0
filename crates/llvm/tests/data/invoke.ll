; `invoke` keeps both edges: its normal and its unwind destination are both
; return sites. An invoke that never returns (`__cxa_throw`) keeps only the
; unwind edge. `resume` leaves the function through its exit.
;
;   main:0:0   invoke work   -call-> work:entry; return sites main:0:0#2 (ok) and main:0:0#4 (lpad)
;   main:0:0#2 invoke __cxa_throw: external, flows to lpad only
;   main:0:0#3 ret (block never: no predecessor)
;   main:0:0#4 landingpad ; main:0:0#5 call ext ; main:0:0#6 resume -> main:exit
source_filename = "invoke.cpp"

define i32 @main() personality i8* bitcast (i32 (...)* @__gxx_personality_v0 to i8*) {
entry:
  %r = invoke i32 @work(i32 1)
          to label %ok unwind label %lpad

ok:
  invoke void @__cxa_throw(i8* null, i8* null, i8* null)
          to label %never unwind label %lpad

never:
  ret i32 %r

lpad:
  %lp = landingpad { i8*, i32 }
          cleanup
  %x = call i32 @ext(i32 2)
  resume { i8*, i32 } %lp
}

define i32 @work(i32 %x) {
  ret i32 %x
}

declare void @__cxa_throw(i8*, i8*, i8*)
declare i32 @ext(i32)
declare i32 @__gxx_personality_v0(...)
