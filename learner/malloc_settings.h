// glibc's malloc tuned for a learner's tensors. By default glibc serves blocks from 128 KiB up
// (dynamically up to 32 MiB) with fresh mmap pages and trims the heap top past 128 KiB, so a
// learner that allocates and frees the same few-hundred-KiB tensors every minibatch step (a
// recurrent model's saved gates and states) pays page faults for them again and again; in a VM
// those faults cost more than the arithmetic (rlx bench recurrent: the LSTM's update 4x slower).
#pragma once

namespace rlx {

// Keeps blocks under 32 MiB on the heap, trims it only past 128 MiB free and grows it by 16 MiB
// at a time; a setting the user gave through MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ or
// MALLOC_TOP_PAD_ is left as given. Call once, early in main().
void tune_malloc_for_tensors();

}  // namespace rlx
