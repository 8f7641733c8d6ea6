#include "hub/http_fetch.hpp"

// The bitmask protocol options stay for a libcurl older than 7.85 found at run time.
#define CURL_DISABLE_DEPRECATION
#include <curl/curl.h>
#include <dlfcn.h>

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <type_traits>

#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/wording.hpp"

namespace iteragpu {
namespace {

constexpr long kMaxRedirects = 8;

// libcurl, opened on the first Hub request rather than linked: linking it would add its
// thirty libraries, about 11 ms on this project's machine, to the start of every command.
// The headers (libcurl4-openssl-dev) fix the interface; the ABI of libcurl.so.4 is stable.
struct Curl {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
  CURLM* (*multi_init)();
  CURLMcode (*multi_cleanup)(CURLM*);
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...);
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_perform)(CURLM*, int*);
  CURLMcode (*multi_poll)(CURLM*, curl_waitfd*, unsigned int, int, int*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
  const char* (*multi_strerror)(CURLMcode);
};

const Curl& curl() {
  static const Curl library = [] {
    Curl c{};
    void* handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      throw ResourceUnavailable("libcurl.so.4 cannot be loaded (" + printable(dlerror()) +
                                "); reading a Hub id needs libcurl 7.66 or later (Debian: apt-get install libcurl4)");
    std::string missing;
    const auto find = [&](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
      if (!function) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    find(c.global_init, "curl_global_init");
    find(c.easy_init, "curl_easy_init");
    find(c.easy_cleanup, "curl_easy_cleanup");
    find(c.easy_setopt, "curl_easy_setopt");
    find(c.easy_strerror, "curl_easy_strerror");
    find(c.slist_append, "curl_slist_append");
    find(c.slist_free_all, "curl_slist_free_all");
    find(c.multi_init, "curl_multi_init");
    find(c.multi_cleanup, "curl_multi_cleanup");
    find(c.multi_setopt, "curl_multi_setopt");
    find(c.multi_add_handle, "curl_multi_add_handle");
    find(c.multi_remove_handle, "curl_multi_remove_handle");
    find(c.multi_perform, "curl_multi_perform");
    find(c.multi_poll, "curl_multi_poll");
    find(c.multi_info_read, "curl_multi_info_read");
    find(c.multi_strerror, "curl_multi_strerror");
    if (!missing.empty())
      throw ResourceUnavailable("libcurl.so.4 lacks " + missing + "; reading a Hub id needs libcurl 7.66 or later");
    c.global_init(CURL_GLOBAL_DEFAULT);
    return c;
  }();
  return library;
}
// Bytes of an error answer kept for its message; the rest is dropped, not an error.
constexpr std::uint64_t kErrorBodyLimit = 4096;

// 2500 → "2.5": the timeout as --timeout writes it.
std::string seconds_text(long milliseconds) {
  std::string text = std::to_string(milliseconds / 1000);
  std::string fraction = std::to_string(1000 + milliseconds % 1000).substr(1);
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return fraction.empty() ? text : text + "." + fraction;
}

struct Transfer {
  const HttpFetch* fetch = nullptr;
  HttpAnswer answer;
  std::unique_ptr<CURL, void (*)(CURL*)> handle{nullptr, curl().easy_cleanup};
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers{nullptr, curl().slist_free_all};
  char curl_error[CURL_ERROR_SIZE] = {};
  // Of the answer being received (a redirect starts a new one).
  long status = 0;
  std::string content_range;
  std::optional<std::uint64_t> content_length;
  std::string overflow;  // why the body was cut off: more than asked
  bool error_body_cut = false;  // an error answer's text, read no further than its start
};

std::string header_value(const std::string& line, const char* name) {
  const std::size_t length = std::char_traits<char>::length(name);
  if (line.size() <= length || line[length] != ':') return "";
  for (std::size_t i = 0; i < length; ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != std::tolower(static_cast<unsigned char>(name[i])))
      return "";
  std::size_t begin = length + 1, end = line.size();
  while (begin < end && (line[begin] == ' ' || line[begin] == '\t')) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(line[end - 1]))) --end;
  return line.substr(begin, end - begin);
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::string line(data, size * count);
  if (line.compare(0, 5, "HTTP/") == 0) {  // a new answer: a redirect's target
    t.status = 0;
    const std::size_t space = line.find(' ');
    if (space != std::string::npos) t.status = std::strtol(line.c_str() + space + 1, nullptr, 10);
    t.content_range.clear();
    t.content_length.reset();
    t.answer.body.clear();
    ++t.answer.requests;
    return size * count;
  }
  if (std::string v = header_value(line, "X-Repo-Commit"); !v.empty() && t.answer.repo_commit.empty())
    t.answer.repo_commit = v;
  if (std::string v = header_value(line, "X-Error-Code"); !v.empty()) t.answer.error_code = v;
  if (std::string v = header_value(line, "X-Error-Message"); !v.empty()) t.answer.error_message = v;
  if (std::string v = header_value(line, "Content-Range"); !v.empty()) t.content_range = v;
  if (std::string v = header_value(line, "Content-Length"); !v.empty()) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (end && *end == '\0') t.content_length = n;
  }
  return size * count;
}

// The most body bytes this answer may carry: a range's length, a whole file's bound, or an
// error text's.
std::uint64_t body_bound(const Transfer& t) {
  if (t.status < 200 || t.status >= 300) return kErrorBodyLimit;
  if (t.fetch->first) return t.fetch->last - *t.fetch->first + 1;
  return t.fetch->body_limit;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::uint64_t bound = body_bound(t), bytes = size * count;
  if (t.status >= 300 || t.status < 200) {  // the start of an error text is enough
    t.answer.body.append(data, std::min<std::uint64_t>(bytes, bound - std::min<std::uint64_t>(bound, t.answer.body.size())));
    if (t.answer.body.size() >= bound) {
      t.error_body_cut = true;
      return 0;
    }
    return size * count;
  }
  if (t.answer.body.size() + bytes > bound) {
    t.overflow = t.fetch->first ? "sent more than the " + grouped_count(bound) +
                                      " bytes asked (the server ignored the range request); stopped reading"
                                : "is larger than " + grouped_count(bound) + " bytes; stopped reading";
    return 0;  // aborts the transfer: CURLE_WRITE_ERROR
  }
  t.answer.body.append(data, bytes);
  return size * count;
}

// "bytes A-B/TOTAL", strictly.
bool parse_content_range(const std::string& text, std::uint64_t& a, std::uint64_t& b, std::uint64_t& total) {
  char tail = 0;
  return std::sscanf(text.c_str(), "bytes %" SCNu64 "-%" SCNu64 "/%" SCNu64 "%c", &a, &b, &total, &tail) == 3 &&
         a <= b && b < total;
}

void throw_transport_failure(const Transfer& t, CURLcode code, long timeout_ms) {
  const std::string& what = t.fetch->what;
  if (!t.overflow.empty()) throw HubUnreachable(what + ": " + t.overflow);
  std::string detail = t.curl_error[0] ? std::string(t.curl_error) : std::string(curl().easy_strerror(code));
  detail = printable(detail);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      throw HubUnreachable(what + ": no complete answer within " + seconds_text(timeout_ms) + " s (--timeout); " +
                           detail);
    case CURLE_COULDNT_CONNECT:
      throw HubUnreachable(what + ": cannot connect (" + detail + "); check HF_ENDPOINT and the network");
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      throw HubUnreachable(what + ": cannot resolve the host (" + detail + "); check HF_ENDPOINT and the network");
    case CURLE_TOO_MANY_REDIRECTS:
      throw HubUnreachable(what + ": more than " + std::to_string(kMaxRedirects) + " redirects (a redirect loop)");
    case CURLE_PARTIAL_FILE:
      throw HubUnreachable(what + ": the answer was cut short (" + detail + ")");
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
      throw HubUnreachable(what + ": TLS failure (" + detail + ")");
    case CURLE_UNSUPPORTED_PROTOCOL:
      throw HubUnreachable(what + ": unsupported protocol (" + detail + "); accepted: http and https URLs");
    default:
      throw HubUnreachable(what + ": " + detail);
  }
}

// A range answer must be exactly the bytes asked (or fewer at the end of the file); a whole
// file answer must be complete.
void check_answer(Transfer& t) {
  HttpAnswer& a = t.answer;
  a.status = t.status;
  if (a.status < 200 || a.status >= 300) return;
  const std::string& what = t.fetch->what;
  if (t.content_length && *t.content_length != a.body.size())
    throw HubUnreachable(what + ": the answer was cut short: " + grouped_count(a.body.size()) + " of " +
                         grouped_count(*t.content_length) + " bytes");
  if (a.status == 206) {
    std::uint64_t first = 0, last = 0, total = 0;
    if (!t.fetch->first) throw HubUnreachable(what + ": a partial answer (206) to a request for the whole file");
    if (!parse_content_range(t.content_range, first, last, total))
      throw HubUnreachable(what + ": a partial answer whose Content-Range is '" + printable(t.content_range) +
                           "'; expected bytes FIRST-LAST/SIZE");
    const std::uint64_t asked_last = std::min(t.fetch->last, total - 1);
    if (first != *t.fetch->first || last != asked_last || a.body.size() != last - first + 1)
      throw HubUnreachable(what + ": asked bytes " + std::to_string(*t.fetch->first) + "-" +
                           std::to_string(t.fetch->last) + ", the answer says '" + printable(t.content_range) +
                           "' and holds " + grouped_count(a.body.size()) + " bytes");
    a.file_size = total;
    return;
  }
  a.file_size = a.body.size();  // 200: the whole file, within its bound (on_body)
}

template <typename Value>
CURLcode set(CURL* handle, CURLoption option, Value value) {
  return curl().easy_setopt(handle, option, value);
}

void configure(Transfer& t, const HttpSettings& settings) {
  CURL* h = t.handle.get();
  set(h, CURLOPT_URL, t.fetch->url.c_str());
  set(h, CURLOPT_NOSIGNAL, 1L);
  set(h, CURLOPT_FOLLOWLOCATION, 1L);
  set(h, CURLOPT_MAXREDIRS, kMaxRedirects);
  // HTTP and HTTPS only, redirects included: by name since 7.85, by bitmask before.
  if (set(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
      set(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK) {
    const long http = CURLPROTO_HTTP | CURLPROTO_HTTPS;
    if (set(h, CURLOPT_PROTOCOLS, http) != CURLE_OK || set(h, CURLOPT_REDIR_PROTOCOLS, http) != CURLE_OK)
      throw HubUnreachable(t.fetch->what + ": libcurl cannot restrict its protocols to HTTP and HTTPS");
  }
  set(h, CURLOPT_TIMEOUT_MS, settings.timeout_ms);
  set(h, CURLOPT_CONNECTTIMEOUT_MS, settings.timeout_ms);
  set(h, CURLOPT_ERRORBUFFER, t.curl_error);
  set(h, CURLOPT_HEADERFUNCTION, on_header);
  set(h, CURLOPT_HEADERDATA, &t);
  set(h, CURLOPT_WRITEFUNCTION, on_body);
  set(h, CURLOPT_WRITEDATA, &t);
  set(h, CURLOPT_USERAGENT, "iteragpu/" ITERAGPU_VERSION);
  if (t.fetch->first) {
    const std::string range = std::to_string(*t.fetch->first) + "-" + std::to_string(t.fetch->last);
    set(h, CURLOPT_RANGE, range.c_str());  // copied by libcurl
  }
  // libcurl sends a custom Authorization header to the first host only, never after a
  // redirect to another one (CURLOPT_UNRESTRICTED_AUTH is left off).
  if (!settings.token.empty()) {
    const std::string authorization = "Authorization: Bearer " + settings.token;
    t.headers.reset(curl().slist_append(t.headers.release(), authorization.c_str()));
    set(h, CURLOPT_HTTPHEADER, t.headers.get());
  }
}

}  // namespace

std::string url_encoded(const std::string& text, bool keep_slashes) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slashes && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::vector<HttpAnswer> fetch_all(const std::vector<HttpFetch>& fetches, const HttpSettings& settings,
                                  HttpTotals& totals) {
  const Curl& c = curl();
  std::unique_ptr<CURLM, CURLMcode (*)(CURLM*)> multi(c.multi_init(), c.multi_cleanup);
  if (!multi) throw HubUnreachable("libcurl could not start a transfer");
  c.multi_setopt(multi.get(), CURLMOPT_MAX_TOTAL_CONNECTIONS, 32L);
  std::vector<std::unique_ptr<Transfer>> transfers;
  for (const HttpFetch& fetch : fetches) {
    auto t = std::make_unique<Transfer>();
    t->fetch = &fetch;
    t->handle.reset(c.easy_init());
    if (!t->handle) throw HubUnreachable(fetch.what + ": libcurl could not start a transfer");
    configure(*t, settings);
    c.multi_add_handle(multi.get(), t->handle.get());
    transfers.push_back(std::move(t));
  }
  // Every handle is removed before it is cleaned up, failure or not.
  struct Detach {
    CURLM* multi;
    std::vector<std::unique_ptr<Transfer>>& transfers;
    ~Detach() {
      for (auto& t : transfers) curl().multi_remove_handle(multi, t->handle.get());
    }
  } detach{multi.get(), transfers};

  int running = 0;
  do {
    CURLMcode code = c.multi_perform(multi.get(), &running);
    if (code == CURLM_OK && running) code = c.multi_poll(multi.get(), nullptr, 0, 1000, nullptr);
    if (code != CURLM_OK) throw HubUnreachable(std::string("libcurl: ") + c.multi_strerror(code));
    int queued = 0;
    while (CURLMsg* message = c.multi_info_read(multi.get(), &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      for (auto& t : transfers)
        if (t->handle.get() == message->easy_handle) {
          const CURLcode result = message->data.result;
          if (result != CURLE_OK && !(result == CURLE_WRITE_ERROR && t->error_body_cut))
            throw_transport_failure(*t, result, settings.timeout_ms);
          check_answer(*t);
        }
    }
  } while (running);

  std::vector<HttpAnswer> answers;
  for (auto& t : transfers) {
    totals.requests += t->answer.requests;
    totals.bytes += t->answer.body.size();
    answers.push_back(std::move(t->answer));
  }
  return answers;
}

}  // namespace iteragpu
