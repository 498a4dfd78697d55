#pragma once
// The encoder and the Sink call of one sink node; see source_emitter.h for the context.

#include "codegen/source_emitter.h"

namespace flow::codegen {

void EmitSink(IoEmitContext cx, const plan::SinkNode& n);

}  // namespace flow::codegen
