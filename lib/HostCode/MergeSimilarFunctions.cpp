//===- MergeSimilarFunctions.cpp - One function for nests alike -----------===//
//
// Functions are compared by walking them side by side, block by block and
// instruction by instruction, as LLVM's MergeFunctions does; unlike it,
// integer constants may differ where an argument could stand in their
// place. Those places become the merged function's trailing arguments,
// and every call passes its own function's constants.
//
// The cost is at run time: a bound or a stride that was a constant is a
// register, so a loop the optimizer would have unrolled completely stays
// a loop. The tiled nests have their inner loops unrolled into vector
// operations already, so what varies there is outer bounds and offsets;
// in a scalar nest, the bound of a short innermost loop stays constant.
// Step times did not move on the zoo's models (ResNet, MobileViT, BERT,
// Llama, 100 runs each, interleaved).
//
//===----------------------------------------------------------------------===//

#include "sbp/HostCode/MergeSimilarFunctions.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/GetElementPtrTypeIterator.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include <map>
#include <optional>
#include <set>
#include <vector>

using namespace llvm;

namespace {

/// The arguments a merged function may take beyond its members' own: past
/// that, the members share less than their shape.
constexpr unsigned kMaxExtraArguments = 16;

/// Trip counts below which a scalar innermost loop keeps its bound: LLVM
/// unrolls such loops completely.
constexpr unsigned kShortTripCount = 16;

/// An operand: its instruction's position in its function, and its index.
using Site = std::pair<unsigned, unsigned>;

/// A function's arguments, blocks and instructions numbered in order, which
/// is how two functions' values correspond.
struct Numbering {
  explicit Numbering(Function &func) : func(&func) {
    unsigned next = 0;
    for (Argument &arg : func.args())
      numbers[&arg] = next++;
    for (BasicBlock &block : func) {
      numbers[&block] = next++;
      for (Instruction &inst : block) {
        numbers[&inst] = next++;
        instructions.push_back(&inst);
      }
    }
  }

  /// The number of `value`, or nothing for a constant or a global.
  std::optional<unsigned> lookup(const Value *value) const {
    auto it = numbers.find(value);
    if (it == numbers.end())
      return std::nullopt;
    return it->second;
  }

  Function *func;
  DenseMap<const Value *, unsigned> numbers;
  SmallVector<Instruction *> instructions;
};

/// The positions of the comparisons in the innermost loops of `numbering`'s
/// function when it has no vector code: their small constants (short trip
/// counts) stay. A scalar loop is LLVM's to vectorize and unroll, which
/// wants a short innermost trip count known: ResNet's first convolution,
/// merged with a 3x3 one, ran 3x slower with its 7-wide window's bound in
/// a register. Vector code was tiled and unrolled before LLVM.
BitVector findShortLoopBounds(const Numbering &numbering) {
  BitVector bounds(numbering.instructions.size());
  if (llvm::any_of(numbering.instructions, [](Instruction *inst) {
        return inst->getType()->isVectorTy();
      }))
    return bounds;
  DominatorTree dominators(*numbering.func);
  LoopInfo loops(dominators);
  for (auto [position, inst] : llvm::enumerate(numbering.instructions)) {
    Loop *loop = loops.getLoopFor(inst->getParent());
    if (loop && loop->isInnermost() && isa<CmpInst>(inst))
      bounds.set(position);
  }
  return bounds;
}

/// Whether operand `index` of `inst` may be an argument instead of a
/// constant, with the same meaning.
bool mayVary(const Instruction &inst, unsigned index) {
  // A division by a constant is a multiplication and shifts; by a
  // register, tens of cycles.
  if (auto *binary = dyn_cast<BinaryOperator>(&inst))
    return index == 0 || !binary->isIntDivRem();
  if (isa<CmpInst, CastInst, SelectInst, PHINode>(inst))
    return true;
  if (isa<StoreInst>(inst))
    return index == 0;
  if (auto *gep = dyn_cast<GetElementPtrInst>(&inst)) {
    if (index == 0)
      return false;
    auto it = gep_type_begin(gep);
    std::advance(it, index - 1);
    return !it.isStruct();
  }
  return false;
}

/// Whether `func` may be replaced: defined here, seen nowhere else, and
/// only called directly.
bool isCandidate(Function &func) {
  if (func.isDeclaration() || !func.hasLocalLinkage() || func.isVarArg() ||
      func.hasPersonalityFn())
    return false;
  for (const Use &use : func.uses()) {
    auto *call = dyn_cast<CallInst>(use.getUser());
    if (!call || !call->isCallee(&use) ||
        call->getFunctionType() != func.getFunctionType() ||
        call->isMustTailCall())
      return false;
  }
  return true;
}

/// A hash of what `compare` requires to be equal.
size_t hashShape(Function &func) {
  hash_code hash = hash_combine(func.getFunctionType(), func.size());
  for (Instruction &inst : instructions(func))
    hash = hash_combine(hash, inst.getOpcode(), inst.getType(),
                        inst.getNumOperands());
  return hash;
}

/// The sites where `a` and `b` hold different integer constants that may
/// vary, or nothing when the two differ in anything else; `shortLoopBounds`
/// are `a`'s (findShortLoopBounds).
std::optional<std::vector<Site>> compare(const Numbering &a,
                                         const BitVector &shortLoopBounds,
                                         const Numbering &b) {
  if (a.func->getFunctionType() != b.func->getFunctionType() ||
      a.func->getAttributes() != b.func->getAttributes() ||
      a.func->getCallingConv() != b.func->getCallingConv() ||
      a.instructions.size() != b.instructions.size())
    return std::nullopt;
  std::vector<Site> sites;
  for (auto [position, x, y] :
       llvm::enumerate(a.instructions, b.instructions)) {
    if (a.lookup(x->getParent()) != b.lookup(y->getParent()) ||
        !x->isSameOperationAs(y) ||
        x->getRawSubclassOptionalData() != y->getRawSubclassOptionalData() ||
        x->hasMetadataOtherThanDebugLoc() || y->hasMetadataOtherThanDebugLoc())
      return std::nullopt;
    if (auto *gep = dyn_cast<GetElementPtrInst>(x))
      if (gep->getSourceElementType() !=
          cast<GetElementPtrInst>(y)->getSourceElementType())
        return std::nullopt;
    if (auto *phi = dyn_cast<PHINode>(x))
      for (auto [from, to] :
           llvm::zip(phi->blocks(), cast<PHINode>(y)->blocks()))
        if (a.lookup(from) != b.lookup(to))
          return std::nullopt;
    for (unsigned i = 0, e = x->getNumOperands(); i < e; ++i) {
      Value *u = x->getOperand(i), *v = y->getOperand(i);
      std::optional<unsigned> nu = a.lookup(u), nv = b.lookup(v);
      if (nu || nv) {
        if (nu != nv)
          return std::nullopt;
        continue;
      }
      if (u == v)
        continue;
      auto *cu = dyn_cast<ConstantInt>(u);
      auto *cv = dyn_cast<ConstantInt>(v);
      if (!cu || !cv || !cu->getType()->isIntegerTy() ||
          cu->getType() != cv->getType() || !mayVary(*x, i) ||
          (shortLoopBounds[position] &&
           (cu->getValue().abs().ult(kShortTripCount) ||
            cv->getValue().abs().ult(kShortTripCount))))
        return std::nullopt;
      sites.emplace_back(position, i);
    }
  }
  return sites;
}

/// Replaces `group` (its leader first) by one function taking the
/// constants at `sites` as arguments; nothing when it would take too many
/// or a member calls another.
bool merge(Module &module, ArrayRef<Numbering> group,
           const std::set<Site> &sites) {
  for (const Numbering &member : group)
    for (User *user : member.func->users())
      if (llvm::any_of(group, [&](const Numbering &other) {
            return cast<CallInst>(user)->getFunction() == other.func;
          }))
        return false;

  // Sites whose constants vary alike across the group share an argument.
  std::map<std::vector<ConstantInt *>, unsigned> argumentOf;
  std::vector<std::vector<ConstantInt *>> columns;
  std::vector<unsigned> siteArguments;
  for (auto [instruction, operand] : sites) {
    std::vector<ConstantInt *> column;
    for (const Numbering &member : group)
      column.push_back(cast<ConstantInt>(
          member.instructions[instruction]->getOperand(operand)));
    auto [it, inserted] = argumentOf.try_emplace(column, columns.size());
    if (inserted)
      columns.push_back(std::move(column));
    siteArguments.push_back(it->second);
  }
  if (columns.size() > kMaxExtraArguments)
    return false;

  Function *leader = group.front().func;
  SmallVector<Type *> params(leader->getFunctionType()->params());
  for (const std::vector<ConstantInt *> &column : columns)
    params.push_back(column.front()->getType());
  auto *type = FunctionType::get(leader->getReturnType(), params, false);
  Function *merged = Function::Create(type, leader->getLinkage(),
                                      leader->getAddressSpace(), "", &module);
  merged->copyAttributesFrom(leader);
  merged->takeName(leader);
  merged->splice(merged->end(), leader);
  for (auto [from, to] : llvm::zip(leader->args(), merged->args())) {
    to.takeName(&from);
    from.replaceAllUsesWith(&to);
  }
  unsigned firstExtra = leader->arg_size();
  for (auto [site, argument] : llvm::zip(sites, siteArguments))
    group.front().instructions[site.first]->setOperand(
        site.second, merged->getArg(firstExtra + argument));

  for (auto [index, member] : llvm::enumerate(group)) {
    for (User *user : llvm::make_early_inc_range(member.func->users())) {
      auto *call = cast<CallInst>(user);
      SmallVector<Value *> args(call->args());
      for (const std::vector<ConstantInt *> &column : columns)
        args.push_back(column[index]);
      CallInst *replacement =
          CallInst::Create(merged, args, "", call->getIterator());
      replacement->setCallingConv(call->getCallingConv());
      replacement->setAttributes(call->getAttributes());
      replacement->setTailCallKind(call->getTailCallKind());
      replacement->setDebugLoc(call->getDebugLoc());
      replacement->takeName(call);
      call->replaceAllUsesWith(replacement);
      call->eraseFromParent();
    }
    member.func->eraseFromParent();
  }
  return true;
}

} // namespace

sbp::MergeStatistics sbp::mergeSimilarFunctions(Module &module) {
  MapVector<size_t, std::vector<Function *>> buckets;
  for (Function &func : module)
    if (isCandidate(func))
      buckets[hashShape(func)].push_back(&func);

  MergeStatistics statistics;
  for (auto &[hash, functions] : buckets) {
    // Each round groups the first function left with those like it.
    while (functions.size() > 1) {
      std::vector<Numbering> group;
      group.emplace_back(*functions.front());
      BitVector shortLoopBounds = findShortLoopBounds(group.front());
      std::set<Site> sites;
      std::vector<Function *> rest;
      for (Function *func : llvm::drop_begin(functions)) {
        Numbering numbering(*func);
        if (std::optional<std::vector<Site>> found =
                compare(group.front(), shortLoopBounds, numbering)) {
          sites.insert(found->begin(), found->end());
          group.push_back(std::move(numbering));
        } else {
          rest.push_back(func);
        }
      }
      if (group.size() > 1 && merge(module, group, sites)) {
        statistics.merged += group.size();
        ++statistics.groups;
      }
      functions = std::move(rest);
    }
  }
  return statistics;
}
