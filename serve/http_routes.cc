#include "serve/http_routes.h"

#include <nlohmann/json.hpp>

#include "core/did_you_mean.h"
#include "core/named_registry.h"
#include "serve/answer_encoding.h"

namespace rlx {

namespace {

constexpr std::string_view kPolicies = "/v1/policies";

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// Compares in time that depends on the lengths alone, not on where the first difference is.
bool same_secret(std::string_view given, std::string_view expected) {
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    difference |= static_cast<unsigned char>(given[i] ^ expected[i % std::max<size_t>(expected.size(), 1)]);
  }
  return difference == 0 && !expected.empty();
}

HttpAnswer text_answer(int status, std::string body, std::string content_type = "text/plain; charset=utf-8") {
  HttpAnswer answer;
  answer.status = status;
  answer.content_type = std::move(content_type);
  answer.body = std::move(body);
  return answer;
}

nlohmann::json policy_json(PolicySlot& slot) {
  const std::shared_ptr<const ServedModel> model = slot.model();
  const ServedSpaces& spaces = model->spaces();
  return {{"name", slot.name()},
          {"observation_space", spaces.observation_space},
          {"action_space", spaces.action_space},
          {"float_size", spaces.float_size},
          {"byte_size", spaces.byte_size},
          {"mask_size", spaces.mask_size},
          {"action_size", spaces.action_size},
          {"recurrent", spaces.state_size > 0},
          {"version", model->version()},
          {"checkpoint", model->fingerprint()},
          {"origin", model->origin().string()},
          {"source", model->source()}};
}

// "yes" for 1/true, "no" for 0/false, else the header is refused.
bool flag_header(std::string_view value, bool fallback, const char* name) {
  if (value.empty()) return fallback;
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  throw RequestError(400, std::string(name) + " must be 0 or 1, got '" + std::string(value) + "'", name);
}

void answer_act(ServeContext& context, size_t index, const HttpRequestView& request,
                const std::function<void(HttpAnswer&&)>& respond) {
  const bool binary = starts_with(request.content_type, "application/octet-stream");
  const ServeProtocol protocol = binary ? ServeProtocol::kHttpBinary : ServeProtocol::kHttpJson;
  const auto received = request.received;
  ServeMetrics& metrics = context.metrics();
  const auto finish = [&metrics, index, protocol, received, respond](HttpAnswer&& answer) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - received).count();
    metrics.count_answer(index, protocol, answer.status, seconds);
    respond(std::move(answer));
  };
  // JSON under its own type, none, or curl -d's default (application/x-www-form-urlencoded).
  const bool json = request.content_type.empty() || starts_with(request.content_type, "application/json") ||
                    starts_with(request.content_type, "application/x-www-form-urlencoded");
  if (!binary && !json) {
    finish(http_error(415, "Content-Type must be application/json or application/octet-stream, got " + std::string(request.content_type),
                      "Content-Type"));
    return;
  }
  auto act = std::make_unique<ActRequest>();
  act->slot = index;
  act->model = context.slot(index).model();
  act->received = received;
  bool one = false;
  try {
    if (binary) {
      BinaryRequestOptions options;
      options.masks = flag_header(request.mask_header, false, "X-Rlx-Action-Mask");
      options.deterministic = flag_header(request.deterministic_header, true, "X-Rlx-Deterministic");
      options.episode_start = flag_header(request.episode_start_header, false, "X-Rlx-Episode-Start");
      if (!request.session_header.empty()) options.session = std::string(request.session_header);
      decode_binary_request(request.body, options, *act->model, context.limits(), *act);
    } else {
      one = decode_json_request(request.body, *act->model, context.limits(), *act);
    }
  } catch (const RequestError& error) {
    finish(http_error(error.status(), error.what(), error.field()));
    return;
  }
  std::shared_ptr<const ServedModel> model = act->model;
  act->done = [finish, model, binary, one](ActReply&& reply) {
    if (reply.status != 200) {
      finish(http_error(reply.status, reply.error, reply.field));
      return;
    }
    HttpAnswer answer;
    if (binary) {
      answer.content_type = "application/octet-stream";
      answer.body = binary_answer(reply, model->spaces());
      answer.headers = {{"X-Rlx-Version", std::to_string(reply.version)}, {"X-Rlx-Rows", std::to_string(reply.actions.size())}};
    } else {
      answer.body = json_answer(reply, model->spaces(), one);
    }
    finish(std::move(answer));
  };
  context.submit(std::move(act));
}

void answer_reload(ServeContext& context, size_t index, const std::function<void(HttpAnswer&&)>& respond) {
  context.reload(index, /*force=*/true, [respond](const ReloadOutcome& outcome) {
    if (outcome.result == ReloadOutcome::Result::kRefused) {
      HttpAnswer answer = http_error(409, outcome.message);
      respond(std::move(answer));
      return;
    }
    const nlohmann::json body = {{"version", outcome.version},
                                 {"swapped", outcome.result == ReloadOutcome::Result::kSwapped},
                                 {"message", outcome.message}};
    respond(text_answer(200, body.dump(), "application/json"));
  });
}

}  // namespace

HttpAnswer http_error(int status, const std::string& message, const std::string& field) {
  HttpAnswer answer = text_answer(status, json_error(message, field), "application/json");
  if (status == 503) answer.headers.emplace_back("Retry-After", "1");
  if (status == 401) answer.headers.emplace_back("WWW-Authenticate", "Bearer");
  return answer;
}

void handle_http(ServeContext& context, const HttpAuth& auth, const HttpRequestView& request, size_t connections,
                 const std::function<void(HttpAnswer&&)>& respond) {
  const std::string_view path = request.target.substr(0, request.target.find('?'));
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  const auto method_not_allowed = [&](const char* allowed) {
    HttpAnswer answer = http_error(405, std::string(path) + " takes " + allowed + ", not " + std::string(request.method));
    answer.headers.emplace_back("Allow", allowed);
    respond(std::move(answer));
  };
  if (path == "/healthz") {
    get ? respond(text_answer(200, "ok\n")) : method_not_allowed("GET");
    return;
  }
  if (path == "/readyz") {
    if (!get) return method_not_allowed("GET");
    respond(context.draining() ? http_error(503, "draining: the server is shutting down") : text_answer(200, "ready\n"));
    return;
  }
  if (!auth.token.empty()) {
    const std::string_view given = starts_with(request.authorization, "Bearer ") ? request.authorization.substr(7) : "";
    if (!same_secret(given, auth.token)) {
      respond(http_error(401, request.authorization.empty() ? "this server needs an Authorization: Bearer TOKEN header"
                                                            : "the bearer token is wrong",
                         "Authorization"));
      return;
    }
  }
  if (path == "/metrics") {
    get ? respond(text_answer(200, context.metrics_text(connections), "text/plain; version=0.0.4; charset=utf-8"))
        : method_not_allowed("GET");
    return;
  }
  if (path == kPolicies || path == "/v1/policies/") {
    if (!get) return method_not_allowed("GET");
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < context.slot_count(); ++i) list.push_back(policy_json(context.slot(i)));
    respond(text_answer(200, nlohmann::json{{"policies", list}}.dump(), "application/json"));
    return;
  }
  if (!starts_with(path, std::string(kPolicies) + "/")) {
    respond(http_error(404, "no such path: " + std::string(path) + " (see GET /v1/policies, /healthz, /readyz, /metrics)"));
    return;
  }
  const std::string_view rest = path.substr(kPolicies.size() + 1);
  const size_t slash = rest.find('/');
  const std::string name(rest.substr(0, slash));
  const std::string_view action = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  const std::optional<size_t> index = context.slot_index(name);
  if (!index) {
    const std::vector<std::string> names = context.slot_names();
    const std::optional<std::string> close = closest_match(name, names);
    respond(http_error(404, "no policy '" + name + "' (serving: " + joined_names(names) + ")" +
                                (close ? "; did you mean '" + *close + "'?" : ""),
                       "policy"));
    return;
  }
  if (action == "act") {
    post ? answer_act(context, *index, request, respond) : method_not_allowed("POST");
  } else if (action == "reload") {
    post ? answer_reload(context, *index, respond) : method_not_allowed("POST");
  } else if (action.empty()) {
    get ? respond(text_answer(200, policy_json(context.slot(*index)).dump(), "application/json")) : method_not_allowed("GET");
  } else {
    respond(http_error(404, "no such path: " + std::string(path) + " (a policy has /act and /reload)"));
  }
}

}  // namespace rlx
