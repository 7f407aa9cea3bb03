// mpv's JSON IPC (--input-ipc-server PATH): a Unix socket; each client sends one JSON object a line,
// {"command": ["get_property", "pause"], "request_id": 7}, and gets one a line back,
// {"error": "success", "data": false, "request_id": 7}, besides events ({"event": "pause"},
// {"event": "property-change", "id": 1, "name": "time-pos", "data": 3.2}). A line that is not JSON
// is run as an input.conf command line, unanswered, as mpv does. The commands are the
// Controller's (app/player/controller.h).
//
// Nothing blocks: the server is polled from the player's thread each window frame (accept, read,
// write what fits); a client that stops reading is dropped once 16 MB wait for it, a line longer
// than 1 MB drops its client.
//
// Thread: the player's.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cuda/status.h"

namespace histeq::app::player {

class IpcServer {
 public:
  // Listens at `path` (a socket file left there by an earlier run is replaced, as mpv does; any
  // other file is an error). Errors name the path.
  static Result<std::unique_ptr<IpcServer>> open(const std::string& path);
  ~IpcServer();  // says "shutdown" to the clients, flushes what it can, removes the socket file
  IpcServer(const IpcServer&) = delete;
  IpcServer& operator=(const IpcServer&) = delete;

  // A property a client observes (observe_property): the last value sent.
  struct Observer {
    int64_t id = 0;
    std::string name;
    nlohmann::json last;
    bool sent = false;
  };
  // One line from a client.
  using Handler = std::function<void(int client, const std::string& line)>;
  // Accepts new clients, reads what came and hands each complete line to `handler`, writes what
  // waits. Clients that hung up are forgotten.
  void poll(const Handler& handler);
  void send(int client, const nlohmann::json& message);
  void broadcast(const nlohmann::json& message);
  std::vector<int> clients() const;
  std::vector<Observer>* observers(int client);  // nullptr: no such client
  const std::string& path() const noexcept { return path_; }

 private:
  IpcServer() = default;
  struct Client;
  void accept_clients();
  void receive(Client& c);
  void flush(Client& c);
  std::string path_;
  int listen_fd_ = -1;
  std::vector<std::unique_ptr<Client>> clients_;
  int next_id_ = 1;
};

}  // namespace histeq::app::player
