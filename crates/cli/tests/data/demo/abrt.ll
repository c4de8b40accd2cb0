; ModuleID = 'abrt.c'
source_filename = "abrt.c"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%struct._IO_FILE = type { i32, i8*, i8*, i8*, i8*, i8*, i8*, i8*, i8*, i8*, i8*, i8*, %struct._IO_marker*, %struct._IO_FILE*, i32, i32, i64, i16, i8, [1 x i8], i8*, i64, %struct._IO_codecvt*, %struct._IO_wide_data*, %struct._IO_FILE*, i8*, i64, i32, [20 x i8] }
%struct._IO_marker = type opaque
%struct._IO_codecvt = type opaque
%struct._IO_wide_data = type opaque

@stderr = external global %struct._IO_FILE*, align 8
@.str = private unnamed_addr constant [18 x i8] c"caught signal %d\0A\00", align 1
@.str.1 = private unnamed_addr constant [6 x i8] c"n < 5\00", align 1
@.str.2 = private unnamed_addr constant [7 x i8] c"abrt.c\00", align 1
@__PRETTY_FUNCTION__.check = private unnamed_addr constant [15 x i8] c"int check(int)\00", align 1

; Function Attrs: noinline nounwind optnone uwtable
define dso_local i32 @main(i32 noundef %0, i8** noundef %1) #0 !dbg !12 {
  %3 = alloca i32, align 4
  %4 = alloca i32, align 4
  %5 = alloca i8**, align 8
  store i32 0, i32* %3, align 4
  store i32 %0, i32* %4, align 4
  call void @llvm.dbg.declare(metadata i32* %4, metadata !19, metadata !DIExpression()), !dbg !20
  store i8** %1, i8*** %5, align 8
  call void @llvm.dbg.declare(metadata i8*** %5, metadata !21, metadata !DIExpression()), !dbg !22
  %6 = load i32, i32* %4, align 4, !dbg !23
  %7 = icmp sgt i32 %6, 2, !dbg !25
  br i1 %7, label %8, label %10, !dbg !26

8:                                                ; preds = %2
  %9 = call void (i32)* @signal(i32 noundef 11, void (i32)* noundef @on_segv) #6, !dbg !27
  br label %10, !dbg !27

10:                                               ; preds = %8, %2
  %11 = load i32, i32* %4, align 4, !dbg !28
  %12 = icmp sgt i32 %11, 1, !dbg !30
  br i1 %12, label %13, label %25, !dbg !31

13:                                               ; preds = %10
  %14 = load i32, i32* %4, align 4, !dbg !32
  %15 = icmp sgt i32 %14, 3, !dbg !33
  br i1 %15, label %16, label %20, !dbg !32

16:                                               ; preds = %13
  %17 = load i8**, i8*** %5, align 8, !dbg !34
  %18 = getelementptr inbounds i8*, i8** %17, i64 1, !dbg !34
  %19 = load i8*, i8** %18, align 8, !dbg !34
  br label %21, !dbg !32

20:                                               ; preds = %13
  br label %21, !dbg !32

21:                                               ; preds = %20, %16
  %22 = phi i8* [ %19, %16 ], [ null, %20 ], !dbg !32
  %23 = call i64 @measure(i8* noundef %22), !dbg !35
  %24 = trunc i64 %23 to i32, !dbg !36
  store i32 %24, i32* %3, align 4, !dbg !37
  br label %29, !dbg !37

25:                                               ; preds = %10
  %26 = load i32, i32* %4, align 4, !dbg !38
  %27 = add nsw i32 %26, 4, !dbg !39
  %28 = call i32 @check(i32 noundef %27), !dbg !40
  store i32 %28, i32* %3, align 4, !dbg !41
  br label %29, !dbg !41

29:                                               ; preds = %25, %21
  %30 = load i32, i32* %3, align 4, !dbg !42
  ret i32 %30, !dbg !42
}

; Function Attrs: nofree nosync nounwind readnone speculatable willreturn
declare void @llvm.dbg.declare(metadata, metadata, metadata) #1

; Function Attrs: nounwind
declare void (i32)* @signal(i32 noundef, void (i32)* noundef) #2

; Function Attrs: noinline nounwind optnone uwtable
define internal void @on_segv(i32 noundef %0) #0 !dbg !43 {
  %2 = alloca i32, align 4
  store i32 %0, i32* %2, align 4
  call void @llvm.dbg.declare(metadata i32* %2, metadata !46, metadata !DIExpression()), !dbg !47
  %3 = load %struct._IO_FILE*, %struct._IO_FILE** @stderr, align 8, !dbg !48
  %4 = load i32, i32* %2, align 4, !dbg !49
  %5 = call i32 (%struct._IO_FILE*, i8*, ...) @fprintf(%struct._IO_FILE* noundef %3, i8* noundef getelementptr inbounds ([18 x i8], [18 x i8]* @.str, i64 0, i64 0), i32 noundef %4), !dbg !50
  call void @abort() #7, !dbg !51
  unreachable, !dbg !51
}

; Function Attrs: noinline nounwind optnone uwtable
define internal i64 @measure(i8* noundef %0) #0 !dbg !52 {
  %2 = alloca i8*, align 8
  store i8* %0, i8** %2, align 8
  call void @llvm.dbg.declare(metadata i8** %2, metadata !60, metadata !DIExpression()), !dbg !61
  %3 = load i8*, i8** %2, align 8, !dbg !62
  %4 = call i64 @strlen(i8* noundef %3) #8, !dbg !63
  ret i64 %4, !dbg !64
}

; Function Attrs: noinline nounwind optnone uwtable
define internal i32 @check(i32 noundef %0) #0 !dbg !65 {
  %2 = alloca i32, align 4
  store i32 %0, i32* %2, align 4
  call void @llvm.dbg.declare(metadata i32* %2, metadata !68, metadata !DIExpression()), !dbg !69
  %3 = load i32, i32* %2, align 4, !dbg !70
  %4 = icmp slt i32 %3, 5, !dbg !70
  br i1 %4, label %5, label %6, !dbg !73

5:                                                ; preds = %1
  br label %7, !dbg !73

6:                                                ; preds = %1
  call void @__assert_fail(i8* noundef getelementptr inbounds ([6 x i8], [6 x i8]* @.str.1, i64 0, i64 0), i8* noundef getelementptr inbounds ([7 x i8], [7 x i8]* @.str.2, i64 0, i64 0), i32 noundef 13, i8* noundef getelementptr inbounds ([15 x i8], [15 x i8]* @__PRETTY_FUNCTION__.check, i64 0, i64 0)) #7, !dbg !70
  unreachable, !dbg !70

7:                                                ; preds = %5
  %8 = load i32, i32* %2, align 4, !dbg !74
  %9 = mul nsw i32 %8, 2, !dbg !75
  ret i32 %9, !dbg !76
}

declare i32 @fprintf(%struct._IO_FILE* noundef, i8* noundef, ...) #3

; Function Attrs: noreturn nounwind
declare void @abort() #4

; Function Attrs: nounwind readonly willreturn
declare i64 @strlen(i8* noundef) #5

; Function Attrs: noreturn nounwind
declare void @__assert_fail(i8* noundef, i8* noundef, i32 noundef, i8* noundef) #4

attributes #0 = { noinline nounwind optnone uwtable "frame-pointer"="all" "min-legal-vector-width"="0" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #1 = { nofree nosync nounwind readnone speculatable willreturn }
attributes #2 = { nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #3 = { "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #4 = { noreturn nounwind "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #5 = { nounwind readonly willreturn "frame-pointer"="all" "no-trapping-math"="true" "stack-protector-buffer-size"="8" "target-cpu"="x86-64" "target-features"="+cx8,+fxsr,+mmx,+sse,+sse2,+x87" "tune-cpu"="generic" }
attributes #6 = { nounwind }
attributes #7 = { noreturn nounwind }
attributes #8 = { nounwind readonly willreturn }

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!4, !5, !6, !7, !8, !9, !10}
!llvm.ident = !{!11}

!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "Debian clang version 14.0.6", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug, retainedTypes: !2, splitDebugInlining: false, nameTableKind: None)
!1 = !DIFile(filename: "abrt.c", directory: "/build/demo", checksumkind: CSK_MD5, checksum: "11262f4c9fbfc4594fcce0ee34483eb0")
!2 = !{!3}
!3 = !DIBasicType(name: "int", size: 32, encoding: DW_ATE_signed)
!4 = !{i32 7, !"Dwarf Version", i32 5}
!5 = !{i32 2, !"Debug Info Version", i32 3}
!6 = !{i32 1, !"wchar_size", i32 4}
!7 = !{i32 7, !"PIC Level", i32 2}
!8 = !{i32 7, !"PIE Level", i32 2}
!9 = !{i32 7, !"uwtable", i32 1}
!10 = !{i32 7, !"frame-pointer", i32 2}
!11 = !{!"Debian clang version 14.0.6"}
!12 = distinct !DISubprogram(name: "main", scope: !1, file: !1, line: 21, type: !13, scopeLine: 21, flags: DIFlagPrototyped, spFlags: DISPFlagDefinition, unit: !0, retainedNodes: !18)
!13 = !DISubroutineType(types: !14)
!14 = !{!3, !3, !15}
!15 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !16, size: 64)
!16 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !17, size: 64)
!17 = !DIBasicType(name: "char", size: 8, encoding: DW_ATE_signed_char)
!18 = !{}
!19 = !DILocalVariable(name: "argc", arg: 1, scope: !12, file: !1, line: 21, type: !3)
!20 = !DILocation(line: 21, column: 14, scope: !12)
!21 = !DILocalVariable(name: "argv", arg: 2, scope: !12, file: !1, line: 21, type: !15)
!22 = !DILocation(line: 21, column: 27, scope: !12)
!23 = !DILocation(line: 22, column: 9, scope: !24)
!24 = distinct !DILexicalBlock(scope: !12, file: !1, line: 22, column: 9)
!25 = !DILocation(line: 22, column: 14, scope: !24)
!26 = !DILocation(line: 22, column: 9, scope: !12)
!27 = !DILocation(line: 23, column: 9, scope: !24)
!28 = !DILocation(line: 24, column: 9, scope: !29)
!29 = distinct !DILexicalBlock(scope: !12, file: !1, line: 24, column: 9)
!30 = !DILocation(line: 24, column: 14, scope: !29)
!31 = !DILocation(line: 24, column: 9, scope: !12)
!32 = !DILocation(line: 25, column: 29, scope: !29)
!33 = !DILocation(line: 25, column: 34, scope: !29)
!34 = !DILocation(line: 25, column: 40, scope: !29)
!35 = !DILocation(line: 25, column: 21, scope: !29)
!36 = !DILocation(line: 25, column: 16, scope: !29)
!37 = !DILocation(line: 25, column: 9, scope: !29)
!38 = !DILocation(line: 26, column: 18, scope: !12)
!39 = !DILocation(line: 26, column: 23, scope: !12)
!40 = !DILocation(line: 26, column: 12, scope: !12)
!41 = !DILocation(line: 26, column: 5, scope: !12)
!42 = !DILocation(line: 27, column: 1, scope: !12)
!43 = distinct !DISubprogram(name: "on_segv", scope: !1, file: !1, line: 7, type: !44, scopeLine: 7, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition, unit: !0, retainedNodes: !18)
!44 = !DISubroutineType(types: !45)
!45 = !{null, !3}
!46 = !DILocalVariable(name: "sig", arg: 1, scope: !43, file: !1, line: 7, type: !3)
!47 = !DILocation(line: 7, column: 25, scope: !43)
!48 = !DILocation(line: 8, column: 13, scope: !43)
!49 = !DILocation(line: 8, column: 43, scope: !43)
!50 = !DILocation(line: 8, column: 5, scope: !43)
!51 = !DILocation(line: 9, column: 5, scope: !43)
!52 = distinct !DISubprogram(name: "measure", scope: !1, file: !1, line: 17, type: !53, scopeLine: 17, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition, unit: !0, retainedNodes: !18)
!53 = !DISubroutineType(types: !54)
!54 = !{!55, !58}
!55 = !DIDerivedType(tag: DW_TAG_typedef, name: "size_t", file: !56, line: 46, baseType: !57)
!56 = !DIFile(filename: "/usr/lib/llvm-14/lib/clang/14.0.6/include/stddef.h", directory: "", checksumkind: CSK_MD5, checksum: "2499dd2361b915724b073282bea3a7bc")
!57 = !DIBasicType(name: "unsigned long", size: 64, encoding: DW_ATE_unsigned)
!58 = !DIDerivedType(tag: DW_TAG_pointer_type, baseType: !59, size: 64)
!59 = !DIDerivedType(tag: DW_TAG_const_type, baseType: !17)
!60 = !DILocalVariable(name: "s", arg: 1, scope: !52, file: !1, line: 17, type: !58)
!61 = !DILocation(line: 17, column: 35, scope: !52)
!62 = !DILocation(line: 18, column: 19, scope: !52)
!63 = !DILocation(line: 18, column: 12, scope: !52)
!64 = !DILocation(line: 18, column: 5, scope: !52)
!65 = distinct !DISubprogram(name: "check", scope: !1, file: !1, line: 12, type: !66, scopeLine: 12, flags: DIFlagPrototyped, spFlags: DISPFlagLocalToUnit | DISPFlagDefinition, unit: !0, retainedNodes: !18)
!66 = !DISubroutineType(types: !67)
!67 = !{!3, !3}
!68 = !DILocalVariable(name: "n", arg: 1, scope: !65, file: !1, line: 12, type: !3)
!69 = !DILocation(line: 12, column: 22, scope: !65)
!70 = !DILocation(line: 13, column: 5, scope: !71)
!71 = distinct !DILexicalBlock(scope: !72, file: !1, line: 13, column: 5)
!72 = distinct !DILexicalBlock(scope: !65, file: !1, line: 13, column: 5)
!73 = !DILocation(line: 13, column: 5, scope: !72)
!74 = !DILocation(line: 14, column: 12, scope: !65)
!75 = !DILocation(line: 14, column: 14, scope: !65)
!76 = !DILocation(line: 14, column: 5, scope: !65)
