// Recurrent operators: LSTM, GRU and RNN, forward, reverse or bidirectional, with ONNX's gate
// orders and weight layouts, sequence_lens, initial states, LSTM's peepholes and input_forget,
// GRU's linear_before_reset, clip, layout and every activation ONNX names. Written for opsets
// 13-17.
#include <cctype>

#include "ml/onnx/emitter.hpp"

namespace slipstream::ml::onnx_import {
namespace {

// The activations ONNX lets a recurrent operator name, in the order of the codes that
// onnx_rnn_activation dispatches on. Those that take activation_alpha or activation_beta consume
// the next value of that list, in the order of the activations (ONNX Runtime's reading: a
// Sigmoid consumes none), with the defaults of the corresponding ONNX operator when the list is
// short.
struct ActivationKind {
  const char* name;
  bool takes_alpha, takes_beta;
  float alpha, beta;
};

constexpr ActivationKind kActivations[] = {
    {"Sigmoid", false, false, 0.0F, 0.0F},   {"Tanh", false, false, 0.0F, 0.0F},
    {"Relu", false, false, 0.0F, 0.0F},      {"Affine", true, true, 1.0F, 0.0F},
    {"LeakyRelu", true, false, 0.01F, 0.0F}, {"ThresholdedRelu", true, false, 1.0F, 0.0F},
    {"ScaledTanh", true, true, 1.0F, 1.0F},  {"HardSigmoid", true, true, 0.2F, 0.5F},
    {"Elu", true, false, 1.0F, 0.0F},        {"Softsign", false, false, 0.0F, 0.0F},
    {"Softplus", false, false, 0.0F, 0.0F},
};

// `clip`, when given, bounds the activation's input (the gates', not LSTM's cell state before
// h: ONNX Runtime's reading of "applied to the input of activations").
constexpr char kActivation[] = R"(
def onnx_rnn_activation(self, x: Tensor, kind: int, alpha: float, beta: float,
                        clip: Optional[float]) -> Tensor:
    if clip is not None:
        x = torch.clamp(x, -clip, clip)
    if kind == 0:
        return torch.sigmoid(x)
    if kind == 1:
        return torch.tanh(x)
    if kind == 2:
        return torch.relu(x)
    if kind == 3:
        return alpha * x + beta
    if kind == 4:
        return torch.where(x >= 0, x, alpha * x)
    if kind == 5:
        return torch.where(x > alpha, x, torch.zeros_like(x))
    if kind == 6:
        return alpha * torch.tanh(beta * x)
    if kind == 7:
        return torch.clamp(alpha * x + beta, 0.0, 1.0)
    if kind == 8:
        return torch.where(x >= 0, x, alpha * (torch.exp(x) - 1))
    if kind == 9:
        return x / (1 + torch.abs(x))
    return torch.softplus(x)
)";

// Which (time, batch) steps are within the batch entry's sequence_lens: [seq, batch, 1], or None
// when every sequence is whole.
constexpr char kValid[] = R"(
def onnx_rnn_valid(self, lens: Optional[Tensor], x: Tensor) -> Optional[Tensor]:
    if lens is None:
        return None
    steps = torch.arange(x.size(0), device=x.device).unsqueeze(1)
    return (steps < lens.to(x.device).unsqueeze(0)).unsqueeze(2)
)";

// Y [seq, directions, batch, hidden] and the last states [directions, batch, hidden] from each
// direction's, in `layout` (1: batch first). Steps past a sequence's length are zeros in Y.
constexpr char kOutputs[] = R"(
def onnx_rnn_outputs(self, ys: List[Tensor], last: List[Tensor], valid: Optional[Tensor],
                     layout: int) -> Tuple[Tensor, Tensor]:
    y = torch.stack(ys, 1)
    if valid is not None:
        y = torch.where(valid.unsqueeze(1), y, torch.zeros_like(y))
    h = torch.stack(last, 0)
    if layout == 1:
        return y.permute([2, 0, 1, 3]), h.transpose(0, 1)
    return y, h
)";

// The recurrences, one direction after the other; the input's projection for every step is one
// matrix multiply before the loop. A step past a batch entry's length leaves its state as it was,
// so the reverse direction starts at each sequence's own end. Initial states are indexed by
// direction on axis `layout` ([directions, batch, hidden], or [batch, directions, hidden]).
//
// LSTM: gates i, o, f, c in W, R and B; peepholes i, o, f in P; activations f, g, h per direction.
constexpr char kLstm[] = R"(
def onnx_rnn_lstm(self, x: Tensor, w: Tensor, r: Tensor, b: Optional[Tensor],
                  lens: Optional[Tensor], h0: Optional[Tensor], c0: Optional[Tensor],
                  p: Optional[Tensor], reverse: List[bool], acts: List[int],
                  alphas: List[float], betas: List[float], clip: Optional[float],
                  input_forget: bool, layout: int) -> Tuple[Tensor, Tensor, Tensor]:
    if layout == 1:
        x = x.transpose(0, 1)
    steps, batch, hidden = x.size(0), x.size(1), r.size(2)
    valid = self.onnx_rnn_valid(lens, x)
    ys: List[Tensor] = []
    hs: List[Tensor] = []
    cs: List[Tensor] = []
    for d in range(len(reverse)):
        fa, ga, ha = 3 * d, 3 * d + 1, 3 * d + 2
        xw = torch.matmul(x, w[d].t())
        if b is not None:
            xw = xw + b[d, :4 * hidden] + b[d, 4 * hidden:]
        rt = r[d].t()
        h = torch.zeros([batch, hidden], dtype=x.dtype, device=x.device)
        c = torch.zeros([batch, hidden], dtype=x.dtype, device=x.device)
        if h0 is not None:
            h = h0.select(layout, d)
        if c0 is not None:
            c = c0.select(layout, d)
        y = torch.zeros([steps, batch, hidden], dtype=x.dtype, device=x.device)
        for step in range(steps):
            t = steps - 1 - step if reverse[d] else step
            gates = torch.chunk(xw[t] + torch.matmul(h, rt), 4, 1)
            i, o, f, g = gates[0], gates[1], gates[2], gates[3]
            if p is not None:
                i = i + p[d, :hidden] * c
                f = f + p[d, 2 * hidden:] * c
            i = self.onnx_rnn_activation(i, acts[fa], alphas[fa], betas[fa], clip)
            if input_forget:
                f = 1 - i
            else:
                f = self.onnx_rnn_activation(f, acts[fa], alphas[fa], betas[fa], clip)
            g = self.onnx_rnn_activation(g, acts[ga], alphas[ga], betas[ga], clip)
            c_next = f * c + i * g
            if p is not None:
                o = o + p[d, hidden:2 * hidden] * c_next
            o = self.onnx_rnn_activation(o, acts[fa], alphas[fa], betas[fa], clip)
            h_next = o * self.onnx_rnn_activation(c_next, acts[ha], alphas[ha], betas[ha], None)
            if valid is not None:
                h_next = torch.where(valid[t], h_next, h)
                c_next = torch.where(valid[t], c_next, c)
            h, c = h_next, c_next
            y[t] = h
        ys.append(y)
        hs.append(h)
        cs.append(c)
    y_all, h_last = self.onnx_rnn_outputs(ys, hs, valid, layout)
    c_last = torch.stack(cs, 0)
    if layout == 1:
        c_last = c_last.transpose(0, 1)
    return y_all, h_last, c_last
)";

// GRU: gates z, r, h in W, R and B; activations f, g per direction. linear_before_reset applies
// the reset gate after the recurrent weights and their bias (PyTorch's GRU) instead of before.
constexpr char kGru[] = R"(
def onnx_rnn_gru(self, x: Tensor, w: Tensor, r: Tensor, b: Optional[Tensor],
                 lens: Optional[Tensor], h0: Optional[Tensor], reverse: List[bool],
                 acts: List[int], alphas: List[float], betas: List[float],
                 clip: Optional[float], linear_before_reset: bool,
                 layout: int) -> Tuple[Tensor, Tensor]:
    if layout == 1:
        x = x.transpose(0, 1)
    steps, batch, hidden = x.size(0), x.size(1), r.size(2)
    valid = self.onnx_rnn_valid(lens, x)
    ys: List[Tensor] = []
    hs: List[Tensor] = []
    for d in range(len(reverse)):
        fa, ga = 2 * d, 2 * d + 1
        xw = torch.matmul(x, w[d].t())
        rb = torch.zeros([3 * hidden], dtype=x.dtype, device=x.device)
        if b is not None:
            xw = xw + b[d, :3 * hidden]
            rb = b[d, 3 * hidden:]
        r_zr, r_h = r[d, :2 * hidden].t(), r[d, 2 * hidden:].t()
        rb_zr, rb_h = rb[:2 * hidden], rb[2 * hidden:]
        h = torch.zeros([batch, hidden], dtype=x.dtype, device=x.device)
        if h0 is not None:
            h = h0.select(layout, d)
        y = torch.zeros([steps, batch, hidden], dtype=x.dtype, device=x.device)
        for step in range(steps):
            t = steps - 1 - step if reverse[d] else step
            zr = xw[t, :, :2 * hidden] + torch.matmul(h, r_zr) + rb_zr
            z = self.onnx_rnn_activation(zr[:, :hidden], acts[fa], alphas[fa], betas[fa], clip)
            reset = self.onnx_rnn_activation(zr[:, hidden:], acts[fa], alphas[fa], betas[fa],
                                             clip)
            if linear_before_reset:
                n = xw[t, :, 2 * hidden:] + reset * (torch.matmul(h, r_h) + rb_h)
            else:
                n = xw[t, :, 2 * hidden:] + torch.matmul(reset * h, r_h) + rb_h
            n = self.onnx_rnn_activation(n, acts[ga], alphas[ga], betas[ga], clip)
            h_next = (1 - z) * n + z * h
            if valid is not None:
                h_next = torch.where(valid[t], h_next, h)
            h = h_next
            y[t] = h
        ys.append(y)
        hs.append(h)
    return self.onnx_rnn_outputs(ys, hs, valid, layout)
)";

// RNN: one gate; activation f per direction.
constexpr char kRnn[] = R"(
def onnx_rnn_rnn(self, x: Tensor, w: Tensor, r: Tensor, b: Optional[Tensor],
                 lens: Optional[Tensor], h0: Optional[Tensor], reverse: List[bool],
                 acts: List[int], alphas: List[float], betas: List[float],
                 clip: Optional[float], layout: int) -> Tuple[Tensor, Tensor]:
    if layout == 1:
        x = x.transpose(0, 1)
    steps, batch, hidden = x.size(0), x.size(1), r.size(2)
    valid = self.onnx_rnn_valid(lens, x)
    ys: List[Tensor] = []
    hs: List[Tensor] = []
    for d in range(len(reverse)):
        xw = torch.matmul(x, w[d].t())
        if b is not None:
            xw = xw + b[d, :hidden] + b[d, hidden:]
        rt = r[d].t()
        h = torch.zeros([batch, hidden], dtype=x.dtype, device=x.device)
        if h0 is not None:
            h = h0.select(layout, d)
        y = torch.zeros([steps, batch, hidden], dtype=x.dtype, device=x.device)
        for step in range(steps):
            t = steps - 1 - step if reverse[d] else step
            h_next = self.onnx_rnn_activation(xw[t] + torch.matmul(h, rt), acts[d], alphas[d],
                                              betas[d], clip)
            if valid is not None:
                h_next = torch.where(valid[t], h_next, h)
            h = h_next
            y[t] = h
        ys.append(y)
        hs.append(h)
    return self.onnx_rnn_outputs(ys, hs, valid, layout)
)";

// Activation names compare without case, as ONNX Runtime compares them (exporters vary).
bool same_name(const std::string& given, const char* known) {
  std::size_t k = 0;
  for (; k < given.size() && known[k] != '\0'; ++k) {
    if (std::tolower(static_cast<unsigned char>(given[k])) !=
        std::tolower(static_cast<unsigned char>(known[k]))) {
      return false;
    }
  }
  return k == given.size() && known[k] == '\0';
}

// What the three operators share, as the helpers' arguments: the directions, the activations
// with their alpha and beta, clip and layout. `defaults` are the operator's activations for one
// direction (f, g, h for LSTM).
struct Recurrence {
  std::string reverse;  // [False], [True] or [False, True], one per direction
  std::string kinds, alphas, betas, clip, layout;
};

Recurrence recurrence(const onnx::NodeProto& node, const std::vector<std::string>& defaults) {
  Recurrence out;
  const std::string direction = Emitter::attr_string(node, "direction", "forward");
  if (direction == "forward") {
    out.reverse = "[False]";
  } else if (direction == "reverse") {
    out.reverse = "[True]";
  } else if (direction == "bidirectional") {
    out.reverse = "[False, True]";
  } else {
    Emitter::refuse(node,
                    "direction '" + direction + "' is not one of forward, reverse, bidirectional");
  }
  const std::size_t directions = direction == "bidirectional" ? 2 : 1;
  const std::size_t per_direction = defaults.size();

  std::vector<std::string> names;
  if (const onnx::AttributeProto* given = Emitter::attribute(node, "activations")) {
    names.assign(given->strings().begin(), given->strings().end());
  } else {
    names = defaults;
  }
  // One direction's list serves both (as ONNX Runtime reads it).
  if (directions == 2 && names.size() == per_direction) {
    const std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  }
  if (names.size() != per_direction * directions) {
    Emitter::refuse(node, "activations has " + std::to_string(names.size()) +
                              " functions where the operator needs " +
                              std::to_string(per_direction * directions) + " (" +
                              std::to_string(per_direction) + " per direction)");
  }
  const std::vector<float> alphas = Emitter::attr_floats(node, "activation_alpha");
  const std::vector<float> betas = Emitter::attr_floats(node, "activation_beta");
  std::size_t next_alpha = 0, next_beta = 0;
  std::vector<std::int64_t> kinds;
  std::vector<float> alpha_of, beta_of;
  for (const std::string& name : names) {
    std::size_t kind = 0;
    while (kind < std::size(kActivations) && !same_name(name, kActivations[kind].name)) ++kind;
    if (kind == std::size(kActivations)) {
      Emitter::refuse(node, "activation '" + name +
                                "' is not supported (supported: Sigmoid, "
                                "Tanh, Relu, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, "
                                "HardSigmoid, Elu, Softsign, Softplus)");
    }
    const ActivationKind& a = kActivations[kind];
    float alpha = a.alpha, beta = a.beta;
    if (a.takes_alpha && next_alpha < alphas.size()) alpha = alphas[next_alpha++];
    if (a.takes_beta && next_beta < betas.size()) beta = betas[next_beta++];
    kinds.push_back(static_cast<std::int64_t>(kind));
    alpha_of.push_back(alpha);
    beta_of.push_back(beta);
  }
  out.kinds = Emitter::ints(kinds);
  out.alphas = Emitter::floats(alpha_of);
  out.betas = Emitter::floats(beta_of);

  out.clip = "None";
  if (Emitter::attribute(node, "clip") != nullptr) {
    const float clip = Emitter::attr_float(node, "clip", 0.0F);
    if (!(clip > 0.0F)) Emitter::refuse(node, "clip must be positive");
    out.clip = Emitter::number(clip);
  }
  const std::int64_t layout = Emitter::attr_int(node, "layout", 0);
  if (layout != 0 && layout != 1) {
    Emitter::refuse(node, "layout " + std::to_string(layout) + " is not 0 or 1");
  }
  out.layout = std::to_string(layout);
  return out;
}

// Refuses a constant weight input (as exported models have them) whose shape contradicts the
// direction and hidden_size: [directions, rows_per_hidden * hidden_size, ...]. Others are
// known only when the model runs.
void check_weights(const Emitter& e, const onnx::NodeProto& node, int input, const char* what,
                   std::int64_t rows_per_hidden) {
  const onnx::TensorProto* value = e.constant(node, input);
  if (value == nullptr) return;
  const std::int64_t directions =
      Emitter::attr_string(node, "direction", "forward") == "bidirectional" ? 2 : 1;
  const std::int64_t hidden = Emitter::attr_int(node, "hidden_size", 0);
  if (value->dims_size() < 2 || value->dims(0) != directions ||
      (hidden > 0 && value->dims(1) != rows_per_hidden * hidden)) {
    Emitter::refuse(node, std::string(what) + "'s shape contradicts direction and hidden_size");
  }
}

// W, R and B of an operator with `gates` gates.
void check_gate_weights(const Emitter& e, const onnx::NodeProto& node, std::int64_t gates) {
  check_weights(e, node, 1, "W", gates);
  check_weights(e, node, 2, "R", gates);
  check_weights(e, node, 3, "B", 2 * gates);
}

std::string optional_input(Emitter& e, const onnx::NodeProto& node, int i) {
  return Emitter::has_input(node, i) ? e.in(node, i) : "None";
}

// The helper's call, then each output bound to its element of the returned tuple.
void emit(Emitter& e, const onnx::NodeProto& node, const std::string& call, int outputs) {
  const std::string result = e.fresh();
  e.line(result + " = " + call);
  for (int i = 0; i < outputs && i < node.output_size(); ++i) {
    e.out(node, i, result + "[" + std::to_string(i) + "]");
  }
}

// The helpers every operator calls, and the arguments every helper takes first.
std::string common_arguments(Emitter& e, const onnx::NodeProto& node) {
  e.helper("onnx_rnn_activation", kActivation);
  e.helper("onnx_rnn_valid", kValid);
  e.helper("onnx_rnn_outputs", kOutputs);
  return e.in(node, 0) + ", " + e.in(node, 1) + ", " + e.in(node, 2) + ", " +
         optional_input(e, node, 3) + ", " + optional_input(e, node, 4) + ", " +
         optional_input(e, node, 5);
}

std::string activation_arguments(const Recurrence& r) {
  return r.reverse + ", " + r.kinds + ", " + r.alphas + ", " + r.betas + ", " + r.clip;
}

void lower_LSTM(Emitter& e, const onnx::NodeProto& node) {
  const Recurrence r = recurrence(node, {"Sigmoid", "Tanh", "Tanh"});
  check_gate_weights(e, node, 4);
  check_weights(e, node, 7, "P", 3);
  const bool input_forget = Emitter::attr_int(node, "input_forget", 0) != 0;
  emit(e, node,
       e.helper("onnx_rnn_lstm", kLstm) + "(" + common_arguments(e, node) + ", " +
           optional_input(e, node, 6) + ", " + optional_input(e, node, 7) + ", " +
           activation_arguments(r) + ", " + (input_forget ? "True" : "False") + ", " + r.layout +
           ")",
       3);
}

void lower_GRU(Emitter& e, const onnx::NodeProto& node) {
  const Recurrence r = recurrence(node, {"Sigmoid", "Tanh"});
  check_gate_weights(e, node, 3);
  const bool linear = Emitter::attr_int(node, "linear_before_reset", 0) != 0;
  emit(e, node,
       e.helper("onnx_rnn_gru", kGru) + "(" + common_arguments(e, node) + ", " +
           activation_arguments(r) + ", " + (linear ? "True" : "False") + ", " + r.layout + ")",
       2);
}

void lower_RNN(Emitter& e, const onnx::NodeProto& node) {
  const Recurrence r = recurrence(node, {"Tanh"});
  check_gate_weights(e, node, 1);
  emit(e, node,
       e.helper("onnx_rnn_rnn", kRnn) + "(" + common_arguments(e, node) + ", " +
           activation_arguments(r) + ", " + r.layout + ")",
       2);
}

}  // namespace

void add_rnn_ops(OpTable& t) {
  t.add("", "LSTM", lower_LSTM);
  t.add("", "GRU", lower_GRU);
  t.add("", "RNN", lower_RNN);
}

}  // namespace slipstream::ml::onnx_import
