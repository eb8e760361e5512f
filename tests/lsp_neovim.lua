-- Loaded after the user's init.lua (docs/editors.md's snippet for this Neovim, as
-- written): with the file given on the command line open, it records what the
-- client did with deja lsp - attached, code lenses drawn, a hover on an agent's
-- line and on a person's, the hand-off lens run - then opens a second file and
-- keeps the messages. What it saw goes to $DEJA_NVIM_OUT as JSON; Neovim quits.
local out = { messages = "" }
local function finish()
  out.messages = out.messages .. vim.fn.execute("messages")
  local f = io.open(vim.env.DEJA_NVIM_OUT, "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  local buf = vim.api.nvim_get_current_buf()
  local clients = vim.lsp.get_clients or vim.lsp.get_active_clients
  local function deja()
    for _, c in pairs(clients()) do
      if c.name == "deja" then return c end
    end
  end
  local function attached()
    local c = deja()
    return c ~= nil and vim.lsp.buf_is_attached(buf, c.id) and c.server_capabilities ~= nil
      and c.server_capabilities.codeLensProvider ~= nil
  end
  if vim.env.DEJA_NVIM_EXPECT == "no-server" then
    vim.wait(1000, function() return false end, 50)
    out.attached = attached()
    -- a second file: the snippet must not complain again, nor fail
    local second_ok, second_err = pcall(vim.cmd, "edit " .. vim.fn.fnameescape(vim.env.DEJA_SECOND))
    out.second = second_ok and vim.NIL or tostring(second_err)
    vim.wait(500, function() return false end, 50)
    return
  end
  out.attached = vim.wait(30000, attached, 20)
  vim.wait(30000, function() return #vim.lsp.codelens.get(buf) > 0 end, 20)
  out.lenses = {}
  local handoff
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    local title = lens.command and lens.command.title
    table.insert(out.lenses, { line = lens.range.start.line, title = title })
    if title == "hand off" then handoff = lens.command end
  end
  -- what the client drew: the lenses' virtual text
  vim.wait(2000, function() return false end, 50)
  out.virtual = {}
  for _, ns in pairs(vim.api.nvim_get_namespaces()) do
    for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
      for _, chunk in ipairs(mark[4].virt_text or {}) do
        table.insert(out.virtual, { line = mark[2], text = chunk[1] })
      end
    end
  end
  local function ask(method, params)
    local got = vim.lsp.buf_request_sync(buf, method, params, 30000)
    for _, answer in pairs(got or {}) do
      if answer.result then return answer.result end
    end
  end
  local function hover(line)
    local uri = vim.uri_from_bufnr(buf)
    local result = ask("textDocument/hover",
      { textDocument = { uri = uri }, position = { line = line, character = 0 } })
    return result and result.contents.value or vim.NIL
  end
  out.agent_hover = hover(tonumber(vim.env.DEJA_AGENT_LINE))
  out.person_hover = hover(0)
  -- the hand-off lens's command, as vim.lsp.codelens.run() sends it
  local result = handoff and ask("workspace/executeCommand", handoff)
  out.handoff_path = result and result.path or vim.NIL
  vim.wait(5000, function()
    return result ~= nil and vim.fn.bufnr(result.path) ~= -1
  end, 20)
  out.buffers = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    table.insert(out.buffers, vim.api.nvim_buf_get_name(b))
  end
end)
out.error = ok and vim.NIL or tostring(err)
finish()
