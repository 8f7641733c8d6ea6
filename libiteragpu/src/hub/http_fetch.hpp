#pragma once
// Files, or their first bytes, fetched over HTTP(S) in parallel with libcurl: the one place
// the library touches the network. Redirects are followed (a bounded number, HTTP and HTTPS
// only; the token is never sent to another host), a range answer is checked against what was
// asked, and a body is never read past its bound, so a server that ignores the range cannot
// make us read 10 GB. A transport failure throws HubUnreachable "<what>: reason"; an HTTP
// status is the caller's to judge.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace iteragpu {

struct HttpFetch {
  std::string url;
  std::string what;                      // "org/name: config.json", for messages
  std::optional<std::uint64_t> first;    // a range request of bytes first..last (inclusive)
  std::uint64_t last = 0;
  std::uint64_t body_limit = 0;          // whole-file requests: the most bytes accepted
};

struct HttpAnswer {
  long status = 0;
  std::string body;              // the bytes (a range's, or the whole file's), or an error's text
  std::uint64_t file_size = 0;   // from Content-Range, or the body's size for a whole file
  std::string repo_commit;       // X-Repo-Commit, from any answer of the redirect chain
  std::string error_code;        // X-Error-Code (RepoNotFound, GatedRepo, ...)
  std::string error_message;     // X-Error-Message
  std::uint64_t requests = 0;    // HTTP requests made (redirects included)
};

struct HttpSettings {
  long timeout_ms = 10000;
  std::string token;  // sent as "Authorization: Bearer" to the first host only
};

struct HttpTotals {
  std::uint64_t requests = 0;
  std::uint64_t bytes = 0;
};

// Every fetch at once; answers in the order asked. Throws HubUnreachable on the first
// transport failure.
std::vector<HttpAnswer> fetch_all(const std::vector<HttpFetch>& fetches, const HttpSettings& settings,
                                  HttpTotals& totals);

// A path part of a URL, percent-encoded except unreserved characters (and '/' when kept).
std::string url_encoded(const std::string& text, bool keep_slashes);

}  // namespace iteragpu
