-- Neovim (0.7+, its built-in LSP client) drives deja lsp as docs/editors.md
-- configures it: attach, code lenses drawn, a hover on an agent's line and on a
-- person's; what it saw goes to $DEJA_NVIM_OUT as JSON, then Neovim quits.
local out = {}
local function finish()
  local f = io.open(vim.env.DEJA_NVIM_OUT, "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  -- docs/editors.md's configuration for Neovim 0.7
  local function lenses(_, buf)
    vim.lsp.codelens.refresh()
    vim.api.nvim_create_autocmd({ "BufEnter", "BufWritePost", "InsertLeave", "CursorHold" },
      { buffer = buf, callback = vim.lsp.codelens.refresh })
  end
  local id
  vim.api.nvim_create_autocmd("BufReadPost", {
    callback = function(args)
      id = id or vim.lsp.start_client({ name = "deja", on_attach = lenses,
        cmd = { vim.env.DEJA_PYTHON, "-m", "deja_blame", "lsp" } })
      vim.lsp.buf_attach_client(args.buf, id)
    end,
  })
  vim.cmd("edit " .. vim.fn.fnameescape(vim.env.DEJA_FILE))
  local buf = vim.api.nvim_get_current_buf()
  out.attached = vim.wait(30000, function()
    local c = id and vim.lsp.get_client_by_id(id)
    return c ~= nil and c.server_capabilities ~= nil and c.server_capabilities.codeLensProvider ~= nil
  end, 20)
  vim.wait(30000, function() return #vim.lsp.codelens.get(buf) > 0 end, 20)
  out.lenses = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
    table.insert(out.lenses, { line = lens.range.start.line, title = lens.command and lens.command.title })
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
  local function hover(line)
    local uri = vim.uri_from_bufnr(buf)
    local got = vim.lsp.buf_request_sync(buf, "textDocument/hover",
      { textDocument = { uri = uri }, position = { line = line, character = 0 } }, 30000)
    for _, answer in pairs(got or {}) do
      if answer.result then return answer.result.contents.value end
    end
    return vim.NIL
  end
  out.agent_hover = hover(tonumber(vim.env.DEJA_AGENT_LINE))
  out.person_hover = hover(0)
end)
out.error = ok and vim.NIL or tostring(err)
finish()
