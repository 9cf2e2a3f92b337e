-- wrk script: POST /act with a small observation, and one JSON line at the end
-- (latencies in microseconds, rps over the whole run, wrk's error counts).
wrk.method = "POST"
wrk.path = "/act"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"observation":[0.1,0.2,0.3,0.4]}'

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"rps":%.1f,"mean_us":%.1f,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"max_us":%d,"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration, summary.requests / (summary.duration / 1e6), latency.mean,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
