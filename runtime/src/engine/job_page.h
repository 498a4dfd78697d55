#pragma once
// Engine-internal: the job page served at GET / (docs/operations.md, "The job page"). One static
// HTML document with its script inline: no build tool and nothing fetched from elsewhere. It polls
// GET /api/job (Job::StatusJson) every second and draws the job graph with per-operator rates,
// backpressure and watermark lag, and the checkpoint history.

#include <string_view>

namespace flow::rt {

std::string_view JobPageHtml();

}  // namespace flow::rt
