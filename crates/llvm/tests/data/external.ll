; Calls to declarations flow through and record the callee's name;
; constant string arguments are recorded on every call site; calls that
; never return and `unreachable` end paths.
;
;   main:4:3  printf("count: %d\n")      external, string arg
;   main:5:3  fputs("oops\n", stderr)    external, string arg
;   main:6:3  syslog(3, "%s: %m", buf)   external; offset 2 into "ab%s: %m"; buf is not constant
;   main:7:3  log_it("oops\n")           in-program callee, string arg
;   main:9:5  abort()                    noreturn by name (no attribute anywhere)
;   main:11:5 fatal(1)                   noreturn only on the declaration (attribute group #1)
;   main:13:3 mine()                     in-program function declared noreturn
;   main:14:3 err(2)                     the program's own `err`: returns (the names list is for declarations)
;   main:15:3 exit(0) #0                 noreturn on the call site
source_filename = "external.c"

%struct._IO_FILE = type opaque

@stderr = external global %struct._IO_FILE*
@.fmt = private unnamed_addr constant [11 x i8] c"count: %d\0A\00", align 1
@.msg = private unnamed_addr constant [6 x i8] c"oops\0A\00", align 1
@.pfx = private unnamed_addr constant [9 x i8] c"ab%s: %m\00", align 1
@buf = global [4 x i8] c"abc\00", align 1

define i32 @main(i32 %argc) !dbg !10 {
  %1 = call i32 (i8*, ...) @printf(i8* getelementptr inbounds ([11 x i8], [11 x i8]* @.fmt, i64 0, i64 0), i32 %argc), !dbg !14
  %2 = load %struct._IO_FILE*, %struct._IO_FILE** @stderr, align 8, !dbg !15
  %3 = call i32 @fputs(i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.msg, i64 0, i64 0), %struct._IO_FILE* %2), !dbg !15
  call void (i32, i8*, ...) @syslog(i32 3, i8* getelementptr inbounds ([9 x i8], [9 x i8]* @.pfx, i64 0, i64 2), i8* getelementptr inbounds ([4 x i8], [4 x i8]* @buf, i64 0, i64 0)), !dbg !16
  call void @log_it(i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.msg, i64 0, i64 0)), !dbg !17
  %c = icmp sgt i32 %argc, 3, !dbg !18
  br i1 %c, label %die1, label %next1, !dbg !18

die1:
  call void @abort(), !dbg !19
  unreachable, !dbg !19

next1:
  %c2 = icmp sgt i32 %argc, 4, !dbg !20
  br i1 %c2, label %die2, label %next2, !dbg !20

die2:
  call void @fatal(i32 1), !dbg !21
  br label %next2, !dbg !21

next2:
  %c3 = icmp sgt i32 %argc, 5, !dbg !22
  br i1 %c3, label %die3, label %next3, !dbg !22

die3:
  call void @mine(), !dbg !23
  unreachable, !dbg !23

next3:
  call void @err(i32 2), !dbg !24
  call void @exit(i32 0) #0, !dbg !25
  unreachable, !dbg !25
}

define void @log_it(i8* %m) !dbg !30 {
  ret void, !dbg !31
}

define void @mine() #0 !dbg !32 {
  call void @abort(), !dbg !33
  unreachable, !dbg !33
}

define void @err(i32 %x) !dbg !34 {
  ret void, !dbg !35
}

declare i32 @printf(i8*, ...)
declare i32 @fputs(i8*, %struct._IO_FILE*)
declare void @syslog(i32, i8*, ...)
declare void @abort()
declare void @fatal(i32) #1
declare void @exit(i32)

attributes #0 = { noreturn }
attributes #1 = { noreturn nounwind }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "hand-written", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "external.c", directory: "/src")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !DISubroutineType(types: !5)
!5 = !{null}
!6 = !{}
!10 = distinct !DISubprogram(name: "main", scope: !1, file: !1, line: 3, type: !4, scopeLine: 3, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !6)
!14 = !DILocation(line: 4, column: 3, scope: !10)
!15 = !DILocation(line: 5, column: 3, scope: !10)
!16 = !DILocation(line: 6, column: 3, scope: !10)
!17 = !DILocation(line: 7, column: 3, scope: !10)
!18 = !DILocation(line: 8, column: 7, scope: !10)
!19 = !DILocation(line: 9, column: 5, scope: !10)
!20 = !DILocation(line: 10, column: 7, scope: !10)
!21 = !DILocation(line: 11, column: 5, scope: !10)
!22 = !DILocation(line: 12, column: 7, scope: !10)
!23 = !DILocation(line: 13, column: 3, scope: !10)
!24 = !DILocation(line: 14, column: 3, scope: !10)
!25 = !DILocation(line: 15, column: 3, scope: !10)
!30 = distinct !DISubprogram(name: "log_it", scope: !1, file: !1, line: 20, type: !4, scopeLine: 20, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !6)
!31 = !DILocation(line: 20, column: 30, scope: !30)
!32 = distinct !DISubprogram(name: "mine", scope: !1, file: !1, line: 21, type: !4, scopeLine: 21, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !6)
!33 = !DILocation(line: 21, column: 30, scope: !32)
!34 = distinct !DISubprogram(name: "err", scope: !1, file: !1, line: 22, type: !4, scopeLine: 22, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !6)
!35 = !DILocation(line: 22, column: 30, scope: !34)
