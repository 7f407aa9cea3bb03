#include "app/common/suggest.h"

#include <algorithm>

namespace histeq::app {

int edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment: the Levenshtein table plus one transposition step.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  int best_d = 3;
  for (const std::string& c : candidates) {
    const int d = edit_distance(word, c);
    if (d < best_d && 2 * d < static_cast<int>(word.size())) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

}  // namespace histeq::app
