-- wrk script: POST ConfigMaps with unique names (durable creates/s).
-- usage: wrk -t1 -c16 -d10s -s bench/apiserver_create.lua http://127.0.0.1:PORT
local counter = 0
local tid = 0
local threads = 0

function setup(thread)
    thread:set("tid", threads)
    threads = threads + 1
end

function request()
    counter = counter + 1
    local body = string.format('{"metadata":{"name":"b%d-%d-%d"},"data":{"k":"v"}}',
        tid, os.time(), counter)
    return wrk.format("POST", "/api/v1/namespaces/default/configmaps",
        {["Content-Type"] = "application/json"}, body)
end

function response(status, headers, body)
    if status ~= 201 then
        io.stderr:write("status " .. status .. ": " .. body .. "\n")
    end
end
