; Call sites and their return sites, entry and exit nodes, grouping of
; instructions by source line within each block (with columns), function
; files from debug info, and intrinsics that are not call sites.
;
; Expected graph (ids FUNC:LINE:COL):
;   main:entry [2] -> main:3:7 (alloca alloca store load lifetime) -> main:4:3 (call f)
;   main:4:3 -call-> f:entry ; its return site main:4:10 (call f) ; return site main:5:3
;   main:5:3 (add icmp br) -> main:6:5 (mul), main:5:3#2 (phi, other block)
;   main:6:5 -> main:7:3 (br) -> main:5:3#2 -> main:8:3 (ret) -> main:exit [8]
;   f:entry [11] -> f:12:3 -> f:13:1 -> f:exit [13] -return-> main:4:10, main:5:3
source_filename = "calls.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@.str = private unnamed_addr constant [6 x i8] c"hello\00", align 1

define dso_local i32 @main() !dbg !10 {
  %1 = alloca i32, align 4
  %2 = alloca [4 x i8], align 1
  call void @llvm.dbg.declare(metadata i32* %1, metadata !20, metadata !DIExpression()), !dbg !11
  store i32 0, i32* %1, align 4, !dbg !11
  %3 = load i32, i32* %1, align 4, !dbg !12
  %4 = getelementptr inbounds [4 x i8], [4 x i8]* %2, i64 0, i64 0
  call void @llvm.lifetime.start.p0i8(i64 4, i8* %4), !dbg !12
  %5 = call i32 @f(i32 %3, i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.str, i64 0, i64 0)), !dbg !13
  %6 = call i32 @f(i32 %5, i8* null), !dbg !14
  %7 = add i32 %5, %6, !dbg !15
  %8 = icmp sgt i32 %7, 0, !dbg !15
  br i1 %8, label %9, label %11, !dbg !15

9:
  %10 = mul i32 %7, 2, !dbg !16
  br label %11, !dbg !17

11:
  %12 = phi i32 [ %7, %0 ], [ %10, %9 ], !dbg !15
  ret i32 %12, !dbg !18
}

define internal i32 @f(i32 %x, i8* %s) !dbg !30 {
  %1 = add i32 %x, 1, !dbg !31
  ret i32 %1, !dbg !32
}

declare void @llvm.dbg.declare(metadata, metadata, metadata)
declare void @llvm.lifetime.start.p0i8(i64 immarg, i8* nocapture)

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "hand-written", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "calls.c", directory: "/src")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !DISubroutineType(types: !5)
!5 = !{null}
!6 = !{}
!10 = distinct !DISubprogram(name: "main", scope: !1, file: !1, line: 2, type: !4, scopeLine: 2, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !6)
!11 = !DILocation(line: 3, column: 7, scope: !10)
!12 = !DILocation(line: 3, column: 11, scope: !10)
!13 = !DILocation(line: 4, column: 3, scope: !10)
!14 = !DILocation(line: 4, column: 10, scope: !10)
!15 = !DILocation(line: 5, column: 3, scope: !10)
!16 = !DILocation(line: 6, column: 5, scope: !10)
!17 = !DILocation(line: 7, column: 3, scope: !10)
!18 = !DILocation(line: 8, column: 3, scope: !10)
!20 = !DILocalVariable(name: "x", scope: !10, file: !1, line: 3, type: !21)
!21 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!30 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 11, type: !4, scopeLine: 11, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !6)
!31 = !DILocation(line: 12, column: 3, scope: !30)
!32 = !DILocation(line: 13, column: 1, scope: !30)
