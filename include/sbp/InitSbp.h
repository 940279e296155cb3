//===- InitSbp.h - Register everything sbp provides -------------*- C++ -*-===//

#ifndef SBP_INITSBP_H
#define SBP_INITSBP_H

namespace mlir {
class DialectRegistry;
namespace sbp {

/// Registers the sbp dialect and the SBP signature rules of upstream ops.
void registerSbpDialects(DialectRegistry &registry);
/// Registers sbp's passes and pipelines with the global pass registry.
void registerSbpPassesAndPipelines();

} // namespace sbp
} // namespace mlir

#endif // SBP_INITSBP_H
