// "did you mean ...?" for a mistyped command or flag. Pure functions, any thread.
#pragma once

#include <string>
#include <vector>

namespace histeq::app {

// The edit distance between `a` and `b`: insertions, deletions, substitutions and transpositions of
// two neighbouring characters each count 1 ("exprot" -> "export" is 1).
int edit_distance(const std::string& a, const std::string& b);

// The candidate nearest `word`, when it is near enough to be a typo of it (distance at most 2, and
// less than half the word's length); "" for none. Ties go to the first candidate.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace histeq::app
