// The family tree of a population-based training run: each trial's metric against environment
// steps, broken where it took another trial's checkpoint; a dashed arrow from the donor's point
// to the receiver's first result after the exploit; the hyperparameters each trial started with
// and took at every exploit, as labels placed where they overlap no other label.
#pragma once

#include <string>
#include <vector>

#include "watch/canvas.h"
#include "watch/plot_data.h"

namespace rlx {

struct PbtTreeOptions {
  std::string x_column = "timesteps_total";
  std::string metric = "episode_return_mean";
  std::string title;  // empty: the experiment, its trials and exploits
};

// Draws the trials and the exploits between them (edges naming trials not among `trials` are
// left out; with another x_column than timesteps_total, an exploit is placed at the trials'
// rows of its timesteps_total); std::invalid_argument when a trial lacks either column or none has a row with both.
void draw_pbt_tree(Canvas& canvas, const std::vector<TrialResults>& trials, const std::vector<ExploitEdge>& edges,
                   const PbtTreeOptions& options);

}  // namespace rlx
