#include "mcp/tools.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <regex>

#include "audit/digest.h"
#include "base/base64.h"
#include "base/fd.h"
#include "config/policy_json.h"
#include "config/strict_json.h"
#include "executor/sandbox.h"
#include "linux/plan.h"
#include "mcp/file_helper.h"
#include "mcp/output.h"
#include "policy/clamp.h"

namespace agentbox::mcp {
namespace {

using nlohmann::json;

constexpr uint64_t kDefaultReadBytes = uint64_t{256} * 1024;
constexpr uint64_t kMaxReadBytes = uint64_t{4} * 1024 * 1024;
constexpr uint64_t kMaxWriteBytes = uint64_t{16} * 1024 * 1024;
constexpr uint64_t kFileOpTimeoutMs = 10'000;

ToolOutcome Refuse(std::string message) {
  ToolOutcome out;
  out.is_error = true;
  out.refused = true;
  out.message = std::move(message);
  return out;
}

// Arguments with null values are treated as absent: models often send null for "not given".
json WithoutNulls(const json& arguments) {
  json out = json::object();
  if (!arguments.is_object()) return out;
  for (const auto& [key, value] : arguments.items()) {
    if (!value.is_null()) out[key] = value;
  }
  return out;
}

const json& StringArraySchema() {
  static const json schema = {{"type", "array"}, {"items", {{"type", "string"}}}};
  return schema;
}

json PolicyAndDecisions(const ClampResult& clamp) {
  json decisions = json::array();
  for (const Decision& d : clamp.decisions) decisions.push_back(DecisionToJson(d));
  return {{"policy", PolicyToJson(clamp.policy)}, {"decisions", decisions}};
}

// A sealed memfd holding `data`, for a program's stdin.
Result<UniqueFd> StdinFrom(const std::string& data) {
  UniqueFd fd(::memfd_create("agentbox-stdin", MFD_CLOEXEC));
  if (!fd) return ErrnoError(ErrorCode::kSetup, "memfd_create", "stdin for the sandbox");
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n <= 0) return ErrnoError(ErrorCode::kSetup, "write", "stdin for the sandbox");
    done += static_cast<size_t>(n);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) {
    return ErrnoError(ErrorCode::kSetup, "lseek", "stdin for the sandbox");
  }
  return fd;
}

std::vector<std::string> BaseEnvironment() {
  return {"HOME=/tmp", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"};
}

struct Prepared {
  ClampResult clamp;
  SandboxPlan plan;
  json pd;  // {"policy", "decisions"} as results and audit records show them
  std::string audit_id;
};

// Everything that can refuse a call before it runs, in order: clamp, plan, then the pending
// audit record (fail closed). The error's context is the refusal to return to the model.
Result<Prepared> Admit(const ToolContext& tc, const Request& request, const SandboxRequest& sandbox,
                       const BeforeRun& before_run) {
  auto clamp = Clamp(tc.ceiling, request, tc.paths);
  if (!clamp) return MakeError(clamp.error().code, "refused: " + clamp.error().Message());
  auto plan = BuildSandboxPlan(clamp->policy, sandbox);
  if (!plan) return MakeError(plan.error().code, "refused: " + plan.error().Message());
  json pd = PolicyAndDecisions(*clamp);
  auto audit_id = before_run(pd["policy"], pd["decisions"]);
  if (!audit_id) {
    return MakeError(ErrorCode::kSetup,
                     "refused: the audit log cannot be written: " + audit_id.error().Message());
  }
  return Prepared{std::move(*clamp), std::move(*plan), std::move(pd), std::move(*audit_id)};
}

// The audit facts of a finished run: sizes and SHA-256 of the whole outputs, never their
// content.
json RunFacts(const RunResult& r, Sha256Stream& out, Sha256Stream& err) {
  return {{"outcome", OutcomeName(r.outcome)},
          {"exit_code", ExitCodeFor(r)},
          {"duration_ms", r.duration_ms},
          {"stdout", out.FinalDigest()},
          {"stderr", err.FinalDigest()}};
}

std::string KernelVerdict(const RunResult& r) {
  std::string text = r.err.data;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? std::string(OutcomeName(r.outcome)) : text;
}

// ---- run_code ------------------------------------------------------------------------

struct RunCodeArgs {
  std::vector<std::string> argv;
  std::optional<std::string> cwd;
  std::optional<std::string> stdin_data;
  std::vector<std::string> env;
  Request request;
};

Result<Network> ParseNetwork(const json& value) {
  if (value.is_string()) {
    if (value == "block") return NetworkWithMode(NetworkMode::kBlock);
    if (value == "allow") return NetworkWithMode(NetworkMode::kAllow);
  } else if (value.is_object()) {
    auto obj = StrictObject::Open(value, "/network", {"allow_domains"});
    if (!obj) return obj.error();
    auto domains = obj->StringArray("allow_domains");
    if (!domains) return domains.error();
    Network network = NetworkWithMode(NetworkMode::kProxy);
    network.allow_domains = std::move(*domains);
    return network;
  }
  return MakeError(ErrorCode::kPolicy,
                   "/network: expected \"block\", \"allow\" or {\"allow_domains\": [...]}");
}

Result<RunCodeArgs> ParseRunCode(const json& arguments, const PathContext& paths,
                                 const Ceiling& ceiling) {
  const json args = WithoutNulls(arguments);
  auto obj = StrictObject::Open(args, "",
                                {"argv", "cwd", "stdin", "env", "readonly_paths", "readwrite_paths",
                                 "network", "timeout_ms"});
  if (!obj) return obj.error();
  RunCodeArgs out;
  auto argv = obj->StringArray("argv");
  if (!argv) return argv.error();
  if (argv->empty() || (*argv)[0].empty())
    return MakeError(ErrorCode::kPolicy, "/argv: must name a program");
  for (const std::string& a : *argv) {
    if (a.find('\0') != std::string::npos)
      return MakeError(ErrorCode::kPolicy, "/argv: contains a NUL byte");
  }
  out.argv = std::move(*argv);
  auto cwd = obj->OptionalString("cwd");
  if (!cwd) return cwd.error();
  if (*cwd) {
    auto canonical = Canonicalize(**cwd, paths);
    if (!canonical) return canonical.error();
    out.cwd = *canonical;
  }
  auto stdin_data = obj->OptionalString("stdin");
  if (!stdin_data) return stdin_data.error();
  out.stdin_data = *stdin_data;
  out.env = BaseEnvironment();
  if (const json* env = obj->Find("env")) {
    if (!env->is_object())
      return MakeError(ErrorCode::kPolicy, "/env: expected an object of strings");
    static const std::regex kName("[A-Za-z_][A-Za-z0-9_]*");
    for (const auto& [key, value] : env->items()) {
      if (!std::regex_match(key, kName)) {
        return MakeError(ErrorCode::kPolicy, "/env: invalid variable name " + QuoteForMessage(key));
      }
      if (!value.is_string() || value.get<std::string>().find('\0') != std::string::npos) {
        return MakeError(ErrorCode::kPolicy, "/env/" + key + ": expected a string without NUL");
      }
      const std::string prefix = key + "=";
      std::erase_if(out.env, [&](const std::string& kv) { return kv.rfind(prefix, 0) == 0; });
      out.env.push_back(prefix + value.get<std::string>());
    }
  }
  PolicyDocument& doc = out.request.doc;
  auto ro = obj->OptionalStringArray("readonly_paths");
  if (!ro) return ro.error();
  auto rw = obj->OptionalStringArray("readwrite_paths");
  if (!rw) return rw.error();
  doc.filesystem.readonly = std::move(*ro);
  doc.filesystem.readwrite = std::move(*rw);
  if (!obj->Has("readonly_paths") && !obj->Has("readwrite_paths")) {
    // Default: what the operator's ceiling allows, as it allows it.
    doc.filesystem.readonly = ceiling.doc.filesystem.readonly;
    doc.filesystem.readwrite = ceiling.doc.filesystem.readwrite;
  }
  if (const json* network = obj->Find("network")) {
    auto parsed = ParseNetwork(*network);
    if (!parsed) return parsed.error();
    doc.network = std::move(*parsed);
  }
  auto timeout = obj->OptionalUint64("timeout_ms");
  if (!timeout) return timeout.error();
  if (*timeout && **timeout == 0)
    return MakeError(ErrorCode::kPolicy, "/timeout_ms: must be at least 1");
  doc.timeout_ms = *timeout;
  return out;
}

ToolOutcome RunCode(const ToolContext& tc, const ToolCall& call, const BeforeRun& before_run) {
  auto args = ParseRunCode(call.arguments, tc.paths, tc.ceiling);
  if (!args) return Refuse("invalid arguments: " + args.error().Message());
  const SandboxRequest sandbox{args->argv, args->env, args->cwd, tc.paths.cwd, {}, {}};
  auto prepared = Admit(tc, args->request, sandbox, before_run);
  if (!prepared) return Refuse(prepared.error().context);
  const json& pd = prepared->pd;
  const std::string& audit_id = prepared->audit_id;

  UniqueFd stdin_fd;
  if (args->stdin_data) {
    auto fd = StdinFrom(*args->stdin_data);
    if (!fd) return Refuse("refused: " + fd.error().Message());
    stdin_fd = std::move(*fd);
  }
  RunOptions options;
  options.capture_output = true;
  options.capture_limit = std::max<size_t>(size_t{64} * 1024, 4 * tc.output_limit);
  options.stdin_fd = stdin_fd ? stdin_fd.get() : -1;
  options.cancel_fd = call.cancel_fd;
  options.on_progress = call.on_progress;
  Sha256Stream out_digest;
  Sha256Stream err_digest;
  options.on_output = [&](int stream, std::string_view bytes) {
    (stream == 1 ? out_digest : err_digest).Update(bytes);
  };
  auto result = RunSandbox(prepared->plan, options);

  ToolOutcome out;
  out.audit_id = audit_id;
  if (!result) {
    out.is_error = true;
    out.message = "the sandbox could not start: " + result.error().Message();
    out.audit = {{"outcome", "failed"}, {"error", result.error().Message()}};
    return out;
  }
  out.audit = RunFacts(*result, out_digest, err_digest);
  const bool proxied = prepared->plan.proxy_bridge;
  if (proxied) out.audit["network"] = ConnectionsToJson(result->connections);
  if (result->outcome == Outcome::kSetupFailed) {
    out.is_error = true;
    out.message = "the sandbox could not start: " + result->error.Message();
    return out;
  }
  const CappedText so = SanitizeAndCap(result->out.data, tc.output_limit);
  const CappedText se = SanitizeAndCap(result->err.data, tc.output_limit);
  out.structured = {
      {"exit_code", ExitCodeFor(*result)},
      {"signal", result->outcome == Outcome::kSignaled ? json(result->signal) : json(nullptr)},
      {"timed_out", result->outcome == Outcome::kTimedOut},
      {"duration_ms", result->duration_ms},
      {"stdout", so.text},
      {"stderr", se.text},
      {"stdout_truncated", so.truncated || result->out.truncated},
      {"stderr_truncated", se.truncated || result->err.truncated},
      {"policy", pd["policy"]},
      {"decisions", pd["decisions"]},
      {"audit_id", audit_id}};
  if (proxied) out.structured["network"] = ConnectionsToJson(result->connections);
  if (result->outcome == Outcome::kExecFailed) {
    out.structured["stderr"] = "agentbox: " + result->error.Message();
  }
  return out;
}

// ---- read_local_file / write_local_file ------------------------------------------------

// True (and `out` filled) when the file helper did not succeed: the kernel's verdict as the
// helper saw it, with the clamp's decisions that explain it.
bool FileHelperFailed(const Result<RunResult>& result, const std::string& what, const json& pd,
                      ToolOutcome& out) {
  if (result && result->outcome == Outcome::kExited && result->exit_code == 0) return false;
  const std::string verdict = result ? KernelVerdict(*result) : result.error().Message();
  out.is_error = true;
  out.message = "the sandbox refused " + what + ": " + verdict;
  if (!pd["decisions"].empty()) out.message += " (decisions: " + DumpJson(pd["decisions"]) + ")";
  out.audit = {{"outcome", "failed"}, {"error", verdict}};
  return true;
}

SandboxRequest FileHelperRequest(const ToolContext& tc, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {tc.self_exe, kFileHelperCommand});
  return SandboxRequest{
      std::move(argv), BaseEnvironment(), std::string("/"), "/", {tc.self_exe}, {}};
}

ToolOutcome ReadLocalFile(const ToolContext& tc, const ToolCall& call,
                          const BeforeRun& before_run) {
  const json args = WithoutNulls(call.arguments);
  auto obj = StrictObject::Open(args, "", {"path", "offset", "max_bytes"});
  if (!obj) return Refuse("invalid arguments: " + obj.error().Message());
  auto path = obj->String("path");
  auto offset = obj->OptionalUint64("offset");
  auto max_bytes = obj->OptionalUint64("max_bytes");
  for (const Status& s :
       {path ? Status{} : Status{path.error()}, offset ? Status{} : Status{offset.error()},
        max_bytes ? Status{} : Status{max_bytes.error()}}) {
    if (!s) return Refuse("invalid arguments: " + s.error().Message());
  }
  const uint64_t max = std::min(max_bytes->value_or(kDefaultReadBytes), kMaxReadBytes);
  const uint64_t from = offset->value_or(0);

  // The narrowest grant: the file itself, read-only (canonicalized, so a link is followed
  // to its target and judged there).
  Request request;
  request.doc.filesystem.readonly = {*path};
  request.doc.timeout_ms = kFileOpTimeoutMs;
  auto target = Canonicalize(*path, tc.paths);
  if (!target) return Refuse(target.error().Message());
  auto prepared =
      Admit(tc, request,
            FileHelperRequest(tc, {"read", *target, std::to_string(from), std::to_string(max)}),
            before_run);
  if (!prepared) return Refuse(prepared.error().context);
  const json& pd = prepared->pd;
  const std::string& audit_id = prepared->audit_id;

  RunOptions options;
  options.capture_output = true;
  // Both streams share the limit: the bytes on stdout, the {"size": N} line on stderr.
  options.capture_limit = std::max<size_t>(2 * (max + 1) + 2, size_t{64} * 1024);
  options.cancel_fd = call.cancel_fd;
  auto result = RunSandbox(prepared->plan, options);
  ToolOutcome out;
  out.audit_id = audit_id;
  if (FileHelperFailed(result, "reading " + *target, pd, out)) return out;
  uint64_t size = 0;
  if (auto meta = ParseStrictJson(result->err.data, "file helper");
      meta && meta->contains("size")) {
    size = (*meta)["size"].get<uint64_t>();
  }
  const std::string& bytes = result->out.data;
  const bool utf8 = IsValidUtf8(bytes);
  out.structured = {{"path", *target},
                    {"content", utf8 ? bytes : Base64Encode(bytes)},
                    {"encoding", utf8 ? "utf8" : "base64"},
                    {"size", size},
                    {"offset", from},
                    {"bytes_read", bytes.size()},
                    {"truncated", from + bytes.size() < size},
                    {"policy", pd["policy"]},
                    {"decisions", pd["decisions"]},
                    {"audit_id", audit_id}};
  out.audit = {{"outcome", "completed"}, {"content", ContentDigest(bytes)}};
  return out;
}

ToolOutcome WriteLocalFile(const ToolContext& tc, const ToolCall& call,
                           const BeforeRun& before_run) {
  const json args = WithoutNulls(call.arguments);
  auto obj = StrictObject::Open(args, "", {"path", "content", "encoding", "mode"});
  if (!obj) return Refuse("invalid arguments: " + obj.error().Message());
  auto path = obj->String("path");
  if (!path) return Refuse("invalid arguments: " + path.error().Message());
  auto content = obj->String("content");
  if (!content) return Refuse("invalid arguments: " + content.error().Message());
  auto encoding = obj->OptionalString("encoding");
  auto mode = obj->OptionalString("mode");
  if (!encoding || !mode) return Refuse("invalid arguments: encoding and mode must be strings");
  const std::string enc = encoding->value_or("utf8");
  const std::string how = mode->value_or("overwrite");
  if (enc != "utf8" && enc != "base64")
    return Refuse("invalid arguments: /encoding: utf8 or base64");
  if (how != "create" && how != "overwrite" && how != "append") {
    return Refuse("invalid arguments: /mode: create, overwrite or append");
  }
  std::string bytes = *content;
  if (enc == "base64") {
    auto decoded = Base64Decode(*content);
    if (!decoded) return Refuse("invalid arguments: /content: not valid base64");
    bytes = std::move(*decoded);
  }
  if (bytes.size() > kMaxWriteBytes)
    return Refuse("invalid arguments: /content: larger than 16 MiB");

  // The narrowest grant: the parent directory, read-write. The file name is kept as given
  // and opened without following a link (O_NOFOLLOW) inside the sandbox.
  const std::string& p = *path;
  const size_t slash = p.find_last_of('/');
  const std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
  const std::string parent =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
  if (name.empty() || name == "." || name == "..")
    return Refuse("invalid arguments: /path: must name a file");
  auto dir = Canonicalize(parent, tc.paths);
  if (!dir) return Refuse(dir.error().Message());
  const std::string target = (*dir == "/" ? "" : *dir) + "/" + name;
  Request request;
  request.doc.filesystem.readwrite = {*dir};
  request.doc.timeout_ms = kFileOpTimeoutMs;
  auto prepared = Admit(tc, request, FileHelperRequest(tc, {"write", target, how}), before_run);
  if (!prepared) return Refuse(prepared.error().context);
  const json& pd = prepared->pd;
  const std::string& audit_id = prepared->audit_id;

  auto stdin_fd = StdinFrom(bytes);
  if (!stdin_fd) return Refuse("refused: " + stdin_fd.error().Message());
  RunOptions options;
  options.capture_output = true;
  options.stdin_fd = stdin_fd->get();
  options.cancel_fd = call.cancel_fd;
  auto result = RunSandbox(prepared->plan, options);
  ToolOutcome out;
  out.audit_id = audit_id;
  if (FileHelperFailed(result, "writing " + target, pd, out)) {
    out.audit["content"] = ContentDigest(bytes);
    return out;
  }
  out.structured = {
      {"path", target},         {"bytes_written", bytes.size()}, {"mode", how},
      {"policy", pd["policy"]}, {"decisions", pd["decisions"]},  {"audit_id", audit_id}};
  out.audit = {{"outcome", "completed"}, {"content", ContentDigest(bytes)}};
  return out;
}

json Annotations(bool read_only, bool destructive, bool open_world) {
  return {{"readOnlyHint", read_only},
          {"destructiveHint", destructive},
          {"idempotentHint", read_only},
          {"openWorldHint", open_world}};
}

}  // namespace

bool IsKnownTool(std::string_view name) {
  return name == "run_code" || name == "read_local_file" || name == "write_local_file";
}

std::string ServerInstructions() {
  return "agentbox is the way to touch this machine: use run_code, read_local_file and "
         "write_local_file for every local command, file read and file write, each of which "
         "runs in an OS sandbox under the operator's ceiling. Attempt the operation you need "
         "and let the sandbox decide; a refusal comes back with the reason.";
}

std::string CeilingSummary(const Ceiling& ceiling) {
  const PolicyDocument& d = ceiling.doc;
  auto list = [](const std::vector<std::string>& paths) {
    std::string out;
    for (const std::string& p : paths) out += (out.empty() ? "" : ", ") + p;
    return out.empty() ? std::string("none") : out;
  };
  std::string out =
      "read-write: " + list(d.filesystem.readwrite) + "; read-only: " + list(d.filesystem.readonly);
  if (!d.filesystem.denied.empty()) out += "; hidden: " + list(d.filesystem.denied);
  const Network net = d.network.value_or(Network{});
  out += "; network: ";
  out += NetworkModeName(net.mode);
  if (net.mode == NetworkMode::kProxy) out += " (" + list(net.allow_domains) + ")";
  out += "; timeout at most " + std::to_string(d.timeout_ms.value_or(kDefaultTimeoutMs)) + " ms";
  return out;
}

json ToolList(const ToolContext& tc) {
  const std::string ceiling = "Current ceiling: " + CeilingSummary(tc.ceiling) +
                              ". Credentials (~/.ssh, ~/.aws, ...) stay hidden and git hooks, "
                              "shell rc files and .mcp.json stay read-only.";
  const json policy_schema = {{"type", "object"}};
  const json decisions_schema = {{"type", "array"}, {"items", {{"type", "object"}}}};
  json run_code = {
      {"name", "run_code"},
      {"title", "Run a command in the sandbox"},
      {"description",
       "Run a local command on the user's machine, inside an OS sandbox (namespaces, Landlock, "
       "seccomp). This is the tool for every local command: builds, tests, scripts, git. argv "
       "is run as given, without a shell (use [\"sh\", \"-c\", \"...\"] for shell syntax). By "
       "default the program gets every path of the ceiling below, as the ceiling allows it; "
       "name readonly_paths and readwrite_paths to ask for less. Everything is narrowed to the "
       "operator's "
       "ceiling; attempt what you need and let the sandbox decide: narrowed or refused paths "
       "are listed in `decisions`. A non-zero exit code is a normal result. " +
           ceiling},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"argv",
           {{"type", "array"},
            {"items", {{"type", "string"}}},
            {"minItems", 1},
            {"description", "program and arguments, e.g. [\"python3\", \"test.py\"]"}}},
          {"cwd",
           {{"type", "string"}, {"description", "working directory (default: the project)"}}},
          {"stdin", {{"type", "string"}, {"description", "text given to the program on stdin"}}},
          {"env",
           {{"type", "object"},
            {"additionalProperties", {{"type", "string"}}},
            {"description", "extra environment variables; the host's are not inherited"}}},
          {"readonly_paths", StringArraySchema()},
          {"readwrite_paths", StringArraySchema()},
          {"network",
           {{"description", "\"block\" (default), \"allow\", or {\"allow_domains\": [...]}"},
            {"oneOf", json::array({{{"type", "string"}, {"enum", {"block", "allow"}}},
                                   {{"type", "object"},
                                    {"properties", {{"allow_domains", StringArraySchema()}}},
                                    {"required", {"allow_domains"}}}})}}},
          {"timeout_ms", {{"type", "integer"}, {"minimum", 1}}}}},
        {"required", {"argv"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"exit_code", {{"type", "integer"}}},
          {"signal", {{"type", {"integer", "null"}}}},
          {"timed_out", {{"type", "boolean"}}},
          {"duration_ms", {{"type", "integer"}}},
          {"stdout", {{"type", "string"}}},
          {"stderr", {{"type", "string"}}},
          {"stdout_truncated", {{"type", "boolean"}}},
          {"stderr_truncated", {{"type", "boolean"}}},
          {"policy", policy_schema},
          {"decisions", decisions_schema},
          {"network",
           {{"type", "object"},
            {"description", "proxy mode: every egress decision, {connections: [...]}"}}},
          {"audit_id", {{"type", "string"}}}}},
        {"required",
         {"exit_code", "timed_out", "duration_ms", "stdout", "stderr", "policy", "decisions",
          "audit_id"}}}},
      {"annotations", Annotations(false, true, true)}};
  json read_file = {
      {"name", "read_local_file"},
      {"title", "Read a local file"},
      {"description",
       "Read a file on the user's local disk. This is the tool for every local file read. "
       "The read runs inside the sandbox with a read-only grant on that file alone, after the "
       "operator's ceiling is applied; a symlink is judged at its target. Text comes back as "
       "utf8, other content as base64. Attempt the read and let the sandbox decide. " +
           ceiling},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"path",
           {{"type", "string"}, {"description", "absolute, ~/..., or relative to the project"}}},
          {"offset", {{"type", "integer"}, {"minimum", 0}}},
          {"max_bytes", {{"type", "integer"}, {"minimum", 0}, {"maximum", kMaxReadBytes}}}}},
        {"required", {"path"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"path", {{"type", "string"}}},
          {"content", {{"type", "string"}}},
          {"encoding", {{"type", "string"}, {"enum", {"utf8", "base64"}}}},
          {"size", {{"type", "integer"}}},
          {"offset", {{"type", "integer"}}},
          {"bytes_read", {{"type", "integer"}}},
          {"truncated", {{"type", "boolean"}}},
          {"policy", policy_schema},
          {"decisions", decisions_schema},
          {"audit_id", {{"type", "string"}}}}},
        {"required", {"path", "content", "encoding", "size", "truncated", "audit_id"}}}},
      {"annotations", Annotations(true, false, false)}};
  json write_file = {
      {"name", "write_local_file"},
      {"title", "Write a local file"},
      {"description",
       "Write a file on the user's local disk. This is the tool for every local file write. "
       "The write runs inside the sandbox with a read-write grant on the file's directory "
       "alone, after the operator's ceiling is applied; it never follows a symlink, and "
       "protected files (git hooks, shell rc files, ...) stay read-only. mode: overwrite "
       "(default), create (fails if the file exists) or append. Attempt the write and let the "
       "sandbox decide. " +
           ceiling},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"path", {{"type", "string"}}},
          {"content", {{"type", "string"}}},
          {"encoding", {{"type", "string"}, {"enum", {"utf8", "base64"}}}},
          {"mode", {{"type", "string"}, {"enum", {"create", "overwrite", "append"}}}}}},
        {"required", {"path", "content"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties",
         {{"path", {{"type", "string"}}},
          {"bytes_written", {{"type", "integer"}}},
          {"mode", {{"type", "string"}}},
          {"policy", policy_schema},
          {"decisions", decisions_schema},
          {"audit_id", {{"type", "string"}}}}},
        {"required", {"path", "bytes_written", "mode", "audit_id"}}}},
      {"annotations", Annotations(false, true, false)}};
  return json::array({run_code, read_file, write_file});
}

ToolOutcome CallTool(const ToolContext& tc, const ToolCall& call, const BeforeRun& before_run) {
  if (call.name == "run_code") return RunCode(tc, call, before_run);
  if (call.name == "read_local_file") return ReadLocalFile(tc, call, before_run);
  if (call.name == "write_local_file") return WriteLocalFile(tc, call, before_run);
  return Refuse("unknown tool " + call.name);
}

}  // namespace agentbox::mcp
