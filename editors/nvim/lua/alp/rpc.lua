-- alpd's JSON-RPC over its Unix socket, with Neovim's own libuv (vim.loop): no dependency.
--
-- Framing is newline-delimited JSON (alpd detects it from the first byte). Replies are
-- matched to requests by id; notifications (after events/subscribe) go to `on_notification`.
-- Everything the socket delivers is handled on the main loop (vim.schedule), never inside a
-- libuv callback, so handlers may use any Neovim API.
local uv = vim.loop

local M = {}

--- The socket path, by the same rules as the `alp` CLI: $ALP_SOCKET, else
--- $XDG_RUNTIME_DIR/alp/alpd.sock (an absolute XDG_RUNTIME_DIR only), else
--- /tmp/alp-$UID/alpd.sock. An empty variable counts as unset.
function M.socket_path(getenv)
  getenv = getenv or os.getenv
  local explicit = getenv("ALP_SOCKET")
  if explicit and explicit ~= "" then
    return vim.fn.fnamemodify(vim.fn.expand(explicit), ":p")
  end
  local runtime_dir = getenv("XDG_RUNTIME_DIR")
  if runtime_dir and runtime_dir:sub(1, 1) == "/" then
    return runtime_dir .. "/alp/alpd.sock"
  end
  return "/tmp/alp-" .. uv.getuid() .. "/alpd.sock"
end

--- Refuse a socket (or its directory) owned by another user: the CLI checks the daemon's
--- peer uid, which libuv cannot read, so the owner of the files stands in for it.
local function check_owner(path)
  local me = uv.getuid()
  for _, p in ipairs({ path, vim.fn.fnamemodify(path, ":h") }) do
    local stat = uv.fs_stat(p)
    if stat and stat.uid ~= me then
      return ("%s is owned by uid %d, not you (uid %d); refusing to talk to it"):format(p, stat.uid, me)
    end
  end
  return nil
end

local Client = {}
Client.__index = Client

local function unreachable(path, failure)
  return ("no daemon answers on %s (%s); start it with: alpd --socket %s"):format(path, failure, path)
end

local function wrap(path, pipe, opts)
  local self = setmetatable({
    path = path,
    pipe = pipe,
    next_id = 1,
    pending = {},
    buffer = "",
    closed = false,
    on_notification = opts.on_notification,
    on_close = opts.on_close,
  }, Client)
  pipe:read_start(function(err, chunk)
    vim.schedule(function()
      self:_receive(err, chunk)
    end)
  end)
  return self
end

--- Connect (waiting at most `timeout` ms). Returns a client, or nil and a message.
--- `opts.on_notification(method, params)` gets notifications; `opts.on_close(reason)` runs
--- once when the connection ends (the daemon went away, or `close` was called), with the
--- client as its second argument.
function M.connect(path, opts)
  opts = opts or {}
  path = path or M.socket_path()
  local refused = check_owner(path)
  if refused then
    return nil, refused
  end
  local pipe = uv.new_pipe(false)
  local done, failure = false, nil
  pipe:connect(path, function(err)
    failure, done = err, true
  end)
  vim.wait(opts.timeout or 5000, function()
    return done
  end, 5)
  if not done or failure then
    pipe:close()
    return nil, unreachable(path, failure or "timed out")
  end
  return wrap(path, pipe, opts)
end

--- Connect without waiting: `callback(client)` or `callback(nil, message)` runs later on the
--- main loop (so a reconnect never blocks editing).
function M.connect_async(path, opts, callback)
  opts = opts or {}
  path = path or M.socket_path()
  local refused = check_owner(path)
  if refused then
    vim.schedule(function()
      callback(nil, refused)
    end)
    return
  end
  local pipe = uv.new_pipe(false)
  local finished = false
  local timer = uv.new_timer()
  local function finish(client, err)
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    vim.schedule(function()
      callback(client, err)
    end)
  end
  timer:start(opts.timeout or 5000, 0, function()
    if not pipe:is_closing() then
      pipe:close()
    end
    finish(nil, unreachable(path, "timed out"))
  end)
  pipe:connect(path, function(err)
    if err then
      if not pipe:is_closing() then
        pipe:close()
      end
      finish(nil, unreachable(path, err))
    else
      finish(wrap(path, pipe, opts), nil)
    end
  end)
end

function Client:_receive(err, chunk)
  if err or not chunk then
    self:close(err or "the daemon closed the connection")
    return
  end
  self.buffer = self.buffer .. chunk
  while true do
    local newline = self.buffer:find("\n", 1, true)
    if not newline then
      return
    end
    local line = self.buffer:sub(1, newline - 1)
    self.buffer = self.buffer:sub(newline + 1)
    local ok, message = pcall(vim.json.decode, line)
    if ok and type(message) == "table" then
      self:_dispatch(message)
    end
  end
end

function Client:_dispatch(message)
  if message.method ~= nil then
    if self.on_notification then
      self.on_notification(message.method, message.params)
    end
    return
  end
  local callback = self.pending[message.id]
  self.pending[message.id] = nil
  if callback then
    callback(message.error ~= nil and message.error ~= vim.NIL and message.error or nil, message.result)
  end
end

--- A request; `callback(err, result)` runs on the main loop. `err` is the JSON-RPC error
--- object (`err.data.name` holds the domain error's name).
function Client:request(method, params, callback)
  if self.closed then
    callback({ code = -1, message = "connection closed: " .. tostring(self.closed) }, nil)
    return
  end
  local id = self.next_id
  self.next_id = id + 1
  self.pending[id] = callback
  if params == nil or next(params) == nil then
    params = vim.empty_dict()
  end
  local frame = vim.json.encode({ jsonrpc = "2.0", id = id, method = method, params = params })
  self.pipe:write(frame .. "\n")
end

--- A request that waits for its reply (at most `timeout` ms): result, or nil and an error.
function Client:request_sync(method, params, timeout)
  local done, err, result = false, nil, nil
  self:request(method, params, function(e, r)
    done, err, result = true, e, r
  end)
  vim.wait(timeout or 10000, function()
    return done
  end, 5)
  if not done then
    return nil, { code = -1, message = method .. " timed out" }
  end
  return result, err
end

function Client:close(reason)
  if self.closed then
    return
  end
  self.closed = reason or "closed"
  for id, callback in pairs(self.pending) do
    self.pending[id] = nil
    callback({ code = -1, message = "connection closed: " .. tostring(self.closed) }, nil)
  end
  if not self.pipe:is_closing() then
    self.pipe:close()
  end
  if self.on_close then
    self.on_close(self.closed, self)
  end
end

--- "NAME: message" for an error object (as the CLI prints it).
function M.describe(err)
  local name = type(err.data) == "table" and err.data.name or nil
  return (name and (name .. ": ") or "") .. tostring(err.message)
end

return M
