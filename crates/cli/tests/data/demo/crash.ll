; ModuleID = 'crash.c'
source_filename = "crash.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%struct._IO_FILE = type { i32, i8*, i8*, i8*, i8*, i8*, i8*, i8*, i8*, i8*, i8*, i8*, %struct._IO_marker*, %struct._IO_FILE*, i32, i32, i64, i16, i8, [1 x i8], i8*, i64, %struct._IO_codecvt*, %struct._IO_wide_data*, %struct._IO_FILE*, i8*, i64, i32, [20 x i8] }
%struct._IO_marker = type opaque
%struct._IO_codecvt = type opaque
%struct._IO_wide_data = type opaque

@stderr = external global %struct._IO_FILE*, align 8
@.str = private unnamed_addr constant [23 x i8] c"starting with %d args\0A\00", align 1
@.str.1 = private unnamed_addr constant [19 x i8] c"too many arguments\00", align 1
@.str.2 = private unnamed_addr constant [2 x i8] c"3\00", align 1
@.str.3 = private unnamed_addr constant [11 x i8] c"parsed %d\0A\00", align 1
@.str.4 = private unnamed_addr constant [5 x i8] c"done\00", align 1
@.str.5 = private unnamed_addr constant [4 x i8] c"big\00", align 1
@.str.6 = private unnamed_addr constant [11 x i8] c"small: %d\0A\00", align 1
@.str.7 = private unnamed_addr constant [20 x i8] c"about to crash: %s\0A\00", align 1

; Function Attrs: noinline nounwind optnone uwtable
define dso_local i32 @main(i32 noundef %0, i8** noundef %1) #0 !dbg !10 {
  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  %5 = alloca i8**, align 8
  %6 = alloca i32, align 4
  store i32 0, i32* %3, align 4
  store i32 %0, i32* %4, align 4
  call void @llvm.dbg.declare(metadata i32* %4, metadata !18, metadata !DIExpression()), !dbg !19
  store i8** %1, i8*** %5, align 8
  call void @llvm.dbg.declare(metadata i8*** %5, metadata !20, metadata !DIExpression()), !dbg !21
  %7 = load %struct._IO_FILE*, %struct._IO_FILE** @stderr, align 8, !dbg !22
  %8 = load i32, i32* %4, align 4, !dbg !23
  %9 = call i32 (%struct._IO_FILE*, i8*, ...) @fprintf(%struct._IO_FILE* noundef %7, i8* noundef getelementptr inbounds ([23 x i8], [23 x i8]* @.str, i64 0, i64 0), i32 noundef %8), !dbg !24
  %10 = load i32, i32* %4, align 4, !dbg !25
  %11 = icmp sgt i32 %10, 2, !dbg !27
  br i1 %11, label %12, label %14, !dbg !28

12:                                               ; preds = %2
  %13 = call i32 @puts(i8* noundef getelementptr inbounds ([19 x i8], [19 x i8]* @.str.1, i64 0, i64 0)), !dbg !29
  store i32 2, i32* %3, align 4, !dbg !31
  br label %30, !dbg !31

14:                                               ; preds = %2
  call void @llvm.dbg.declare(metadata i32* %6, metadata !32, metadata !DIExpression()), !dbg !33
  %15 = load i32, i32* %4, align 4, !dbg !34
  %16 = icmp sgt i32 %15, 1, !dbg !35
  br i1 %16, label %17, label %21, !dbg !34

17:                                               ; preds = %14
  %18 = load i8**, i8*** %5, align 8, !dbg !36
  %19 = getelementptr inbounds i8*, i8** %18, i64 1, !dbg !36
  %20 = load i8*, i8** %19, align 8, !dbg !36
  br label %22, !dbg !34

21:                                               ; preds = %14
  br label %22, !dbg !34

22:                                               ; preds = %21, %17
  %23 = phi i8* [ %20, %17 ], [ getelementptr inbounds ([2 x i8], [2 x i8]* @.str.2, i64 0, i64 0), %21 ], !dbg !34
  %24 = call i32 @parse(i8* noundef %23), !dbg !37
  store i32 %24, i32* %6, align 4, !dbg !33
  %25 = load %struct._IO_FILE*, %struct._IO_FILE** @stderr, align 8, !dbg !38
  %26 = load i32, i32* %6, align 4, !dbg !39
  %27 = call i32 (%struct._IO_FILE*, i8*, ...) @fprintf(%struct._IO_FILE* noundef %25, i8* noundef getelementptr inbounds ([11 x i8], [11 x i8]* @.str.3, i64 0, i64 0), i32 noundef %26), !dbg !40
  %28 = load i32, i32* %6, align 4, !dbg !41
  call void @report(i32 noundef %28), !dbg !42
  %29 = call i32 @puts(i8* noundef getelementptr inbounds ([5 x i8], [5 x i8]* @.str.4, i64 0, i64 0)), !dbg !43
  store i32 0, i32* %3, align 4, !dbg !44
  br label %30, !dbg !44

30:                                               ; preds = %22, %12
  %31 = load i32, i32* %3, align 4, !dbg !45
  ret i32 %31, !dbg !45
}

; Function Attrs: nofree nosync nounwind readnone speculatable willreturn
declare void @llvm.dbg.declare(metadata, metadata, metadata) #1

declare i32 @fprintf(%struct._IO_FILE* noundef, i8* noundef, ...) #2

declare i32 @puts(i8* noundef) #2

; Function Attrs: noinline nounwind optnone uwtable
define internal i32 @parse(i8* noundef %0) #0 !dbg !46 {
  %2 = alloca i8*, align 8
  %3 = alloca i32, align 4
  store i8* %0, i8** %2, align 8
  call void @llvm.dbg.declare(metadata i8** %2, metadata !51, metadata !DIExpression()), !dbg !52
  call void @llvm.dbg.declare(metadata i32* %3, metadata !53, metadata !DIExpression()), !dbg !54
  store i32 0, i32* %3, align 4, !dbg !54
  br label %4, !dbg !55

4:                                                ; preds = %8, %1
  %5 = load i8*, i8** %2, align 8, !dbg !56
  %6 = load i8, i8* %5, align 1, !dbg !57
  %7 = icmp ne i8 %6, 0, !dbg !55
  br i1 %7, label %8, label %18, !dbg !55

8:                                                ; preds = %4
  %9 = load i32, i32* %3, align 4, !dbg !58
  %10 = mul nsw i32 %9, 10, !dbg !60
  %11 = load i8*, i8** %2, align 8, !dbg !61
  %12 = load i8, i8* %11, align 1, !dbg !62
  %13 = sext i8 %12 to i32, !dbg !62
  %14 = sub nsw i32 %13, 48, !dbg !63
  %15 = add nsw i32 %10, %14, !dbg !64
  store i32 %15, i32* %3, align 4, !dbg !65
  %16 = load i8*, i8** %2, align 8, !dbg !66
  %17 = getelementptr inbounds i8, i8* %16, i32 1, !dbg !66
  store i8* %17, i8** %2, align 8, !dbg !66
  br label %4, !dbg !55, !llvm.loop !67

18:                                               ; preds = %4
  %19 = load i32, i32* %3, align 4, !dbg !70
  ret i32 %19, !dbg !71
}

; Function Attrs: noinline nounwind optnone uwtable
define internal void @report(i32 noundef %0) #0 !dbg !72 {
  %2 = alloca i32, align 4
  store i32 %0, i32* %2, align 4
  call void @llvm.dbg.declare(metadata i32* %2, metadata !75, metadata !DIExpression()), !dbg !76
  %3 = load i32, i32* %2, align 4, !dbg !77
  %4 = icmp sgt i32 %3, 5, !dbg !79
  br i1 %4, label %5, label %6, !dbg !80

5:                                                ; preds = %1
  call void @crash(i8* noundef getelementptr inbounds ([4 x i8], [4 x i8]* @.str.5, i64 0, i64 0)), !dbg !81
  br label %9, !dbg !81

6:                                                ; preds = %1
  %7 = load i32, i32* %2, align 4, !dbg !82
  %8 = call i32 (i8*, ...) @printf(i8* noundef getelementptr inbounds ([11 x i8], [11 x i8]* @.str.6, i64 0, i64 0), i32 noundef %7), !dbg !83
  br label %9

9:                                                ; preds = %6, %5
  ret void, !dbg !84
}

; Function Attrs: noinline nounwind optnone uwtable
define internal void @crash(i8* noundef %0) #0 !dbg !85 {
  %2 = alloca i8*, align 8
  %3 = alloca i8*, align 8
  store i8* %0, i8** %2, align 8
  call void @llvm.dbg.declare(metadata i8** %2, metadata !88, metadata !DIExpression()), !dbg !89
  call void @llvm.dbg.declare(metadata i8** %3, metadata !90, metadata !DIExpression()), !dbg !91
  store i8* null, i8** %3, align 8, !dbg !91
  %4 = load %struct._IO_FILE*, %struct._IO_FILE** @stderr, align 8, !dbg !92
  %5 = load i8*, i8** %2, align 8, !dbg !93
  %6 = call i32 (%struct._IO_FILE*, i8*, ...) @fprintf(%struct._IO_FILE* noundef %4, i8* noundef getelementptr inbounds ([20 x i8], [20 x i8]* @.str.7, i64 0, i64 0), i8* noundef %5), !dbg !94
  %7 = load i8*, i8** %3, align 8, !dbg !95
  %8 = getelementptr inbounds i8, i8* %7, i64 0, !dbg !95
  store i8 120, i8* %8, align 1, !dbg !96
  ret void, !dbg !97
}

declare i32 @printf(i8* noundef, ...) #2

attributes #0 = { noinline nounwind optnone uwtable "frame-pointer"="all" "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nofree nosync nounwind readnone speculatable willreturn }
attributes #2 = { "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3, !4, !5, !6, !7, !8}
!llvm.ident = !{!9}

!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "Debian clang version 14.0.6", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "crash.c", directory: "/build/demo", checksumkind: CSK_MD5, checksum: "d2ec0f1e264970185056c11b76a0489c")
!2 = !{i32 7, !"Dwarf Version", i32 5}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 1, !"wchar_size", i32 4}
!5 = !{i32 7, !"PIC Level", i32 2}
!6 = !{i32 7, !"PIE Level", i32 2}
!7 = !{i32 7, !"uwtable", i32 1}
!8 = !{i32 7, !"frame-pointer", i32 2}
!9 = !{!"Debian clang version 14.0.6"}
!10 = distinct !DISubprogram(name: "main", scope: !1, file: !1, line: 26, type: !11, scopeLine: 26, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !17)
!11 = !DISubroutineType(types: !12)
!12 = !{!13, !13, !14}
!13 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!14 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !15, size: 64)
!15 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !16, size: 64)
!16 = !DIBasicType(name: "char", size: 8, encoding: DW_ATE_signed_char)
!17 = !{}
!18 = !DILocalVariable(name: "argc", arg: 1, scope: !10, file: !1, line: 26, type: !13)
!19 = !DILocation(line: 26, column: 14, scope: !10)
!20 = !DILocalVariable(name: "argv", arg: 2, scope: !10, file: !1, line: 26, type: !14)
!21 = !DILocation(line: 26, column: 27, scope: !10)
!22 = !DILocation(line: 27, column: 13, scope: !10)
!23 = !DILocation(line: 27, column: 48, scope: !10)
!24 = !DILocation(line: 27, column: 5, scope: !10)
!25 = !DILocation(line: 28, column: 9, scope: !26)
!26 = distinct !DILexicalBlock(scope: !10, file: !1, line: 28, column: 9)
!27 = !DILocation(line: 28, column: 14, scope: !26)
!28 = !DILocation(line: 28, column: 9, scope: !10)
!29 = !DILocation(line: 29, column: 9, scope: !30)
!30 = distinct !DILexicalBlock(scope: !26, file: !1, line: 28, column: 19)
!31 = !DILocation(line: 30, column: 9, scope: !30)
!32 = !DILocalVariable(name: "n", scope: !10, file: !1, line: 32, type: !13)
!33 = !DILocation(line: 32, column: 9, scope: !10)
!34 = !DILocation(line: 32, column: 19, scope: !10)
!35 = !DILocation(line: 32, column: 24, scope: !10)
!36 = !DILocation(line: 32, column: 30, scope: !10)
!37 = !DILocation(line: 32, column: 13, scope: !10)
!38 = !DILocation(line: 33, column: 13, scope: !10)
!39 = !DILocation(line: 33, column: 36, scope: !10)
!40 = !DILocation(line: 33, column: 5, scope: !10)
!41 = !DILocation(line: 34, column: 12, scope: !10)
!42 = !DILocation(line: 34, column: 5, scope: !10)
!43 = !DILocation(line: 35, column: 5, scope: !10)
!44 = !DILocation(line: 36, column: 5, scope: !10)
!45 = !DILocation(line: 37, column: 1, scope: !10)
!46 = distinct !DISubprogram(name: "parse", scope: !1, file: !1, line: 4, type: !47, scopeLine: 4, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition, unit: !0, retainedNodes: !17)
!47 = !DISubroutineType(types: !48)
!48 = !{!13, !49}
!49 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !50, size: 64)
!50 = !DIDerivedType(tag: DW_TAG_const_type, baseType: !16)
!51 = !DILocalVariable(name: "s", arg: 1, scope: !46, file: !1, line: 4, type: !49)
!52 = !DILocation(line: 4, column: 30, scope: !46)
!53 = !DILocalVariable(name: "n", scope: !46, file: !1, line: 5, type: !13)
!54 = !DILocation(line: 5, column: 9, scope: !46)
!55 = !DILocation(line: 6, column: 5, scope: !46)
!56 = !DILocation(line: 6, column: 13, scope: !46)
!57 = !DILocation(line: 6, column: 12, scope: !46)
!58 = !DILocation(line: 7, column: 13, scope: !59)
!59 = distinct !DILexicalBlock(scope: !46, file: !1, line: 6, column: 16)
!60 = !DILocation(line: 7, column: 15, scope: !59)
!61 = !DILocation(line: 7, column: 24, scope: !59)
!62 = !DILocation(line: 7, column: 23, scope: !59)
!63 = !DILocation(line: 7, column: 26, scope: !59)
!64 = !DILocation(line: 7, column: 20, scope: !59)
!65 = !DILocation(line: 7, column: 11, scope: !59)
!66 = !DILocation(line: 8, column: 10, scope: !59)
!67 = distinct !{!67, !55, !68, !69}
!68 = !DILocation(line: 9, column: 5, scope: !46)
!69 = !{!"llvm.loop.mustprogress"}
!70 = !DILocation(line: 10, column: 12, scope: !46)
!71 = !DILocation(line: 10, column: 5, scope: !46)
!72 = distinct !DISubprogram(name: "report", scope: !1, file: !1, line: 19, type: !73, scopeLine: 19, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition, unit: !0, retainedNodes: !17)
!73 = !DISubroutineType(types: !74)
!74 = !{null, !13}
!75 = !DILocalVariable(name: "n", arg: 1, scope: !72, file: !1, line: 19, type: !13)
!76 = !DILocation(line: 19, column: 24, scope: !72)
!77 = !DILocation(line: 20, column: 9, scope: !78)
!78 = distinct !DILexicalBlock(scope: !72, file: !1, line: 20, column: 9)
!79 = !DILocation(line: 20, column: 11, scope: !78)
!80 = !DILocation(line: 20, column: 9, scope: !72)
!81 = !DILocation(line: 21, column: 9, scope: !78)
!82 = !DILocation(line: 23, column: 31, scope: !78)
!83 = !DILocation(line: 23, column: 9, scope: !78)
!84 = !DILocation(line: 24, column: 1, scope: !72)
!85 = distinct !DISubprogram(name: "crash", scope: !1, file: !1, line: 13, type: !86, scopeLine: 13, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition, unit: !0, retainedNodes: !17)
!86 = !DISubroutineType(types: !87)
!87 = !{null, !49}
!88 = !DILocalVariable(name: "msg", arg: 1, scope: !85, file: !1, line: 13, type: !49)
!89 = !DILocation(line: 13, column: 31, scope: !85)
!90 = !DILocalVariable(name: "p", scope: !85, file: !1, line: 14, type: !15)
!91 = !DILocation(line: 14, column: 11, scope: !85)
!92 = !DILocation(line: 15, column: 13, scope: !85)
!93 = !DILocation(line: 15, column: 45, scope: !85)
!94 = !DILocation(line: 15, column: 5, scope: !85)
!95 = !DILocation(line: 16, column: 5, scope: !85)
!96 = !DILocation(line: 16, column: 10, scope: !85)
!97 = !DILocation(line: 17, column: 1, scope: !85)
