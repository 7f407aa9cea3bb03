#include "app/player/ipc.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace histeq::app::player {
namespace {

constexpr size_t kMaxLine = 1u << 20;
constexpr size_t kMaxPending = 16u << 20;

bool nonblocking(int fd) {
  const int fl = ::fcntl(fd, F_GETFL, 0);
  return fl >= 0 && ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0 && ::fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
}

}  // namespace

struct IpcServer::Client {
  int fd = -1;
  int id = 0;
  std::string in, out;
  bool eof = false;   // it shut its side: what it sent is still answered
  bool gone = false;  // an error, or it hung up
  std::vector<Observer> observers;
  ~Client() {
    if (fd >= 0) ::close(fd);
  }
};

Result<std::unique_ptr<IpcServer>> IpcServer::open(const std::string& path) {
  auto fail = [&](const std::string& why) { return HISTEQ_ERROR(Code::io_error, "--input-ipc-server " + path + ": " + why); };
  sockaddr_un addr{};
  if (path.empty()) return fail("no path");
  if (path.size() >= sizeof(addr.sun_path)) return fail("the path is longer than a socket's " + std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return fail("a file that is not a socket is there");
    ::unlink(path.c_str());  // an earlier run's socket, as mpv replaces it
  }
  std::unique_ptr<IpcServer> s(new IpcServer());
  s->path_ = path;
  s->listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (s->listen_fd_ < 0) return fail(std::strerror(errno));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  if (::bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const std::string why = std::strerror(errno);
    ::close(s->listen_fd_);
    s->listen_fd_ = -1;
    return fail(why);
  }
  if (::listen(s->listen_fd_, 16) != 0 || !nonblocking(s->listen_fd_)) return fail(std::strerror(errno));
  return s;
}

IpcServer::~IpcServer() {
  broadcast({{"event", "shutdown"}});
  // What waits goes out if the clients read it within a moment; the player does not wait longer.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  for (auto& c : clients_) {
    while (!c->gone && !c->out.empty() && std::chrono::steady_clock::now() < until) {
      pollfd p{c->fd, POLLOUT, 0};
      if (::poll(&p, 1, 20) > 0) flush(*c);
    }
  }
  clients_.clear();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    ::unlink(path_.c_str());
  }
}

void IpcServer::poll(const Handler& handler) {
  accept_clients();
  for (size_t i = 0; i < clients_.size(); ++i) {
    Client& c = *clients_[i];
    receive(c);
    // Complete lines, in order; the handler may send (into c.out) and read other clients.
    size_t start = 0;
    for (size_t nl; !c.gone && (nl = c.in.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string line = c.in.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      handler(c.id, line);
    }
    c.in.erase(0, start);
  }
  for (auto& c : clients_) flush(*c);
  clients_.erase(std::remove_if(clients_.begin(), clients_.end(), [](const auto& c) { return c->gone || (c->eof && c->out.empty()); }),
                 clients_.end());
}

void IpcServer::accept_clients() {
  for (;;) {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    if (!nonblocking(fd)) {
      ::close(fd);
      continue;
    }
    auto c = std::make_unique<Client>();
    c->fd = fd;
    c->id = next_id_++;
    clients_.push_back(std::move(c));
  }
}

// What the client sent, without blocking.
void IpcServer::receive(Client& c) {
  char buf[65536];
  while (!c.eof && !c.gone) {
    const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      if (c.in.size() > kMaxLine && c.in.find('\n') == std::string::npos) c.gone = true;
    } else if (n == 0) {
      c.eof = true;
      if (!c.in.empty()) c.in += '\n';  // a last line without its newline
    } else if (errno != EINTR) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) c.gone = true;
      return;
    }
  }
}

void IpcServer::flush(Client& c) {
  while (!c.gone && !c.out.empty()) {
    const ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) c.gone = true;
      break;
    }
  }
  if (c.out.size() > kMaxPending) c.gone = true;  // it stopped reading
}

void IpcServer::send(int client, const nlohmann::json& message) {
  for (auto& c : clients_)
    if (c->id == client && !c->gone) c->out += message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void IpcServer::broadcast(const nlohmann::json& message) {
  const std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  for (auto& c : clients_)
    if (!c->gone) c->out += line;
}

std::vector<int> IpcServer::clients() const {
  std::vector<int> ids;
  for (const auto& c : clients_)
    if (!c->gone) ids.push_back(c->id);
  return ids;
}

std::vector<IpcServer::Observer>* IpcServer::observers(int client) {
  for (auto& c : clients_)
    if (c->id == client) return &c->observers;
  return nullptr;
}

}  // namespace histeq::app::player
