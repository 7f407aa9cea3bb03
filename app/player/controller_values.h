// The controller's values (app/player/controller.h): a command's words and a property's values
// come as JSON (the IPC) or as text (input.conf, --keys); these read them either way, as mpv does
// ("yes"/"no", true/false, 1/0; numbers as text, "1/1.1" a fraction). Private to the controller.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace histeq::app::player {

// A string as it is; a number as the shortest text that reads back the same; a flag as "yes"/"no".
std::string text_value(const nlohmann::json& v);
// mpv's get_property_string: the text form of any value (null: "").
std::string string_value(const nlohmann::json& v);
std::optional<double> number_value(const nlohmann::json& v);
std::optional<bool> flag_value(const nlohmann::json& v);

}  // namespace histeq::app::player
