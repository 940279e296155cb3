//===- MergeSimilarFunctionsTest.cpp - One function for nests alike -------===//

#include "sbp/HostCode/MergeSimilarFunctions.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace llvm;

namespace {

std::unique_ptr<Module> parse(LLVMContext &context, StringRef text) {
  SMDiagnostic error;
  std::unique_ptr<Module> module = parseAssemblyString(text, error, context);
  if (!module)
    error.print("test", errs());
  return module;
}

/// The calls in `caller`, in order.
SmallVector<CallInst *> getCalls(Function &caller) {
  SmallVector<CallInst *> calls;
  for (BasicBlock &block : caller)
    for (Instruction &inst : block)
      if (auto *call = dyn_cast<CallInst>(&inst))
        calls.push_back(call);
  return calls;
}

/// The integer constant at argument `index` of `call`.
int64_t getConstantArg(CallInst *call, unsigned index) {
  return cast<ConstantInt>(call->getArgOperand(index))->getSExtValue();
}

/// A loop of `bound` iterations doubling each element of `type` read
/// `offset` elements ahead.
std::string getLoop(StringRef name, StringRef type, int64_t offset,
                    int64_t bound) {
  std::string text;
  raw_string_ostream os(text);
  os << "define internal void @" << name << "(ptr %p) noinline {\n"
     << "entry:\n  br label %loop\nloop:\n"
     << "  %i = phi i64 [ 0, %entry ], [ %next, %loop ]\n"
     << "  %q = getelementptr " << type << ", ptr %p, i64 %i\n"
     << "  %r = getelementptr " << type << ", ptr %q, i64 " << offset << "\n"
     << "  %x = load " << type << ", ptr %r\n"
     << "  %y = fadd " << type << " %x, %x\n"
     << "  store " << type << " %y, ptr %q\n"
     << "  %next = add nuw nsw i64 %i, 1\n"
     << "  %done = icmp eq i64 %next, " << bound << "\n"
     << "  br i1 %done, label %exit, label %loop\nexit:\n  ret void\n}\n";
  return text;
}

// The same loop at another offset (256 or 512) and bound (64 or 128): the
// two functions become one that takes both.
TEST(MergeSimilarFunctionsTest, ConstantsBecomeArguments) {
  std::string text = getLoop("scaleA", "float", 256, 64) +
                     getLoop("scaleB", "float", 512, 128) +
                     "define void @main(ptr %a, ptr %b) {\n"
                     "  call void @scaleA(ptr %a)\n"
                     "  call void @scaleB(ptr %b)\n"
                     "  call void @scaleA(ptr %b)\n"
                     "  ret void\n}\n";
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, text);
  ASSERT_TRUE(module);
  sbp::MergeStatistics statistics = sbp::mergeSimilarFunctions(*module);
  EXPECT_EQ(statistics.merged, 2u);
  EXPECT_EQ(statistics.groups, 1u);
  EXPECT_FALSE(verifyModule(*module, &errs()));
  EXPECT_FALSE(module->getFunction("scaleB"));
  Function *merged = module->getFunction("scaleA");
  ASSERT_TRUE(merged);
  ASSERT_EQ(merged->arg_size(), 3u);

  // Each call passes its own function's constants, in the order of the
  // merged function's extra arguments.
  SmallVector<CallInst *> calls = getCalls(*module->getFunction("main"));
  ASSERT_EQ(calls.size(), 3u);
  for (CallInst *call : calls)
    EXPECT_EQ(call->getCalledFunction(), merged);
  // The offset (256 or 512) comes first in the function, then the bound.
  EXPECT_EQ(getConstantArg(calls[0], 1), 256);
  EXPECT_EQ(getConstantArg(calls[0], 2), 64);
  EXPECT_EQ(getConstantArg(calls[1], 1), 512);
  EXPECT_EQ(getConstantArg(calls[1], 2), 128);
  EXPECT_EQ(getConstantArg(calls[2], 1), 256);
  EXPECT_EQ(getConstantArg(calls[2], 2), 64);
  // The loop compares with the argument, not a constant.
  bool comparesArgument = false;
  for (BasicBlock &block : *merged)
    for (Instruction &inst : block)
      if (auto *compare = dyn_cast<ICmpInst>(&inst))
        comparesArgument = compare->getOperand(1) == merged->getArg(2);
  EXPECT_TRUE(comparesArgument);
}

// Two sites whose constants vary alike (the same pair in every function)
// share one argument.
constexpr StringRef kAlike = R"(
define internal i64 @f(i64 %x) noinline {
  %a = add i64 %x, 3
  %b = mul i64 %a, 3
  ret i64 %b
}

define internal i64 @g(i64 %x) noinline {
  %a = add i64 %x, 5
  %b = mul i64 %a, 5
  ret i64 %b
}

define i64 @main(i64 %x) {
  %a = call i64 @f(i64 %x)
  %b = call i64 @g(i64 %a)
  ret i64 %b
}
)";

TEST(MergeSimilarFunctionsTest, SitesAlikeShareAnArgument) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, kAlike);
  ASSERT_TRUE(module);
  EXPECT_EQ(sbp::mergeSimilarFunctions(*module).groups, 1u);
  EXPECT_FALSE(verifyModule(*module, &errs()));
  Function *merged = module->getFunction("f");
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->arg_size(), 2u);
  SmallVector<CallInst *> calls = getCalls(*module->getFunction("main"));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(getConstantArg(calls[0], 1), 3);
  EXPECT_EQ(getConstantArg(calls[1], 1), 5);
}

// What must stay: functions that differ in a constant that cannot vary (an
// intrinsic's immediate, a struct index, a float) or should not (a
// divisor), in their flags, or whose address is taken, or that are visible
// outside.
constexpr StringRef kApart = R"(
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1 immarg)

define internal void @copyVolatile(ptr %p, ptr %q) noinline {
  call void @llvm.memcpy.p0.p0.i64(ptr %p, ptr %q, i64 16, i1 true)
  ret void
}

define internal void @copyPlain(ptr %p, ptr %q) noinline {
  call void @llvm.memcpy.p0.p0.i64(ptr %p, ptr %q, i64 16, i1 false)
  ret void
}

define internal ptr @field0(ptr %p) noinline {
  %f = getelementptr {i32, i64}, ptr %p, i64 0, i32 0
  ret ptr %f
}

define internal ptr @field1(ptr %p) noinline {
  %f = getelementptr {i32, i64}, ptr %p, i64 0, i32 1
  ret ptr %f
}

define internal float @half(float %x) noinline {
  %y = fmul float %x, 0.5
  ret float %y
}

define internal float @third(float %x) noinline {
  %y = fmul float %x, 0.25
  ret float %y
}

define internal i64 @wrapping(i64 %x) noinline {
  %y = add i64 %x, 1
  ret i64 %y
}

define internal i64 @notWrapping(i64 %x) noinline {
  %y = add nsw i64 %x, 2
  ret i64 %y
}

define internal i64 @byThree(i64 %x) noinline {
  %y = udiv i64 %x, 3
  ret i64 %y
}

define internal i64 @byFive(i64 %x) noinline {
  %y = udiv i64 %x, 5
  ret i64 %y
}

define internal i64 @addressTaken(i64 %x) noinline {
  %y = add i64 %x, 7
  ret i64 %y
}

define i64 @visible(i64 %x) noinline {
  %y = add i64 %x, 9
  ret i64 %y
}

@table = global ptr @addressTaken

define void @main(ptr %p, ptr %q, float %x, i64 %i) {
  call void @copyVolatile(ptr %p, ptr %q)
  call void @copyPlain(ptr %p, ptr %q)
  %a = call ptr @field0(ptr %p)
  %b = call ptr @field1(ptr %p)
  %c = call float @half(float %x)
  %d = call float @third(float %x)
  %e = call i64 @wrapping(i64 %i)
  %f = call i64 @notWrapping(i64 %i)
  %j = call i64 @byThree(i64 %i)
  %k = call i64 @byFive(i64 %i)
  %g = call i64 @addressTaken(i64 %i)
  %h = call i64 @visible(i64 %i)
  ret void
}
)";

TEST(MergeSimilarFunctionsTest, OtherDifferencesStayApart) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, kApart);
  ASSERT_TRUE(module);
  sbp::MergeStatistics statistics = sbp::mergeSimilarFunctions(*module);
  EXPECT_EQ(statistics.merged, 0u);
  EXPECT_EQ(statistics.groups, 0u);
  EXPECT_FALSE(verifyModule(*module, &errs()));
  for (StringRef name :
       {"copyVolatile", "copyPlain", "field0", "field1", "half", "third",
        "wrapping", "notWrapping", "byThree", "byFive", "addressTaken",
        "visible"})
    EXPECT_TRUE(module->getFunction(name)) << name.str();
}

// A short innermost loop without vector code keeps its bound (LLVM unrolls
// it); a long one, or one of vector code, takes it as an argument.
TEST(MergeSimilarFunctionsTest, ShortScalarLoopsKeepTheirBounds) {
  std::string text = getLoop("short3", "float", 0, 3) +
                     getLoop("short7", "float", 0, 7) +
                     getLoop("long64", "float", 0, 64) +
                     getLoop("long96", "float", 0, 96) +
                     getLoop("vector3", "<8 x float>", 0, 3) +
                     getLoop("vector7", "<8 x float>", 0, 7) +
                     "define void @main(ptr %p) {\n";
  for (StringRef name :
       {"short3", "short7", "long64", "long96", "vector3", "vector7"})
    text += ("  call void @" + name + "(ptr %p)\n").str();
  text += "  ret void\n}\n";
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, text);
  ASSERT_TRUE(module);
  sbp::MergeStatistics statistics = sbp::mergeSimilarFunctions(*module);
  EXPECT_FALSE(verifyModule(*module, &errs()));
  EXPECT_EQ(statistics.groups, 2u);
  EXPECT_TRUE(module->getFunction("short3"));
  EXPECT_TRUE(module->getFunction("short7"));
  EXPECT_TRUE(module->getFunction("long64"));
  EXPECT_FALSE(module->getFunction("long96"));
  EXPECT_TRUE(module->getFunction("vector3"));
  EXPECT_FALSE(module->getFunction("vector7"));
}

// A group that would need more arguments than the limit stays apart.
TEST(MergeSimilarFunctionsTest, TooManyArgumentsStayApart) {
  std::string text;
  raw_string_ostream os(text);
  for (int f = 0; f < 2; ++f) {
    os << "define internal i64 @f" << f << "(i64 %x0) noinline {\n";
    for (int i = 0; i < 20; ++i)
      os << "  %x" << i + 1 << " = add i64 %x" << i << ", " << i * 2 + f
         << "\n";
    os << "  ret i64 %x20\n}\n";
  }
  os << "define i64 @main(i64 %x) {\n  %a = call i64 @f0(i64 %x)\n"
     << "  %b = call i64 @f1(i64 %a)\n  ret i64 %b\n}\n";
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, text);
  ASSERT_TRUE(module);
  EXPECT_EQ(sbp::mergeSimilarFunctions(*module).groups, 0u);
  EXPECT_TRUE(module->getFunction("f0"));
  EXPECT_TRUE(module->getFunction("f1"));
}

} // namespace
