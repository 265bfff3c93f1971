import type { ChannelKindDef, DeliveryResult } from './channel';
import { invalid } from '../../pipeline/errors';
import { answerResult, errorResult, postJson, scrub, type HttpAnswer } from '../http';
import { clip } from './text';

/** A numeric chat id (negative for groups, -100… for supergroups and channels) or a public @username. */
const CHAT_ID = /^(-?[1-9]\d{0,19}|@[A-Za-z][A-Za-z0-9_]{4,31})$/;

/** Telegram's own verdict: `{ok: false, description}` is its words for a refusal, whatever the status. */
function telegramResult(answer: HttpAnswer): DeliveryResult {
  let j: { ok?: unknown; description?: unknown } | null = null;
  try { j = JSON.parse(answer.text); } catch { /* not Telegram's JSON (a proxy page): judged by status alone */ }
  if (j && j.ok === false && typeof j.description === 'string') {
    const retry = answer.status < 400 || answer.status >= 500 || answer.status === 408 || answer.status === 429;
    return { delivered: false, error: j.description, ...(retry ? {} : { permanent: true }) };
  }
  return answerResult(answer);
}

/**
 * `telegram`: a chat the server's bot is a member of, by id or @username.
 * POSTs `{chat_id, text, disable_web_page_preview: true}` to
 * `<TELEGRAM_API_URL>/bot<token>/sendMessage` as plain text (no parse_mode,
 * so monitor names need no escaping). The bot token is in the URL path and is
 * scrubbed from every error.
 */
export const telegram: ChannelKindDef = {
  creatable: true,
  needsConfirmation: false,
  hasSecret: false,
  parseTarget(target) {
    const chat = typeof target === 'string' ? target.trim() : '';
    if (!CHAT_ID.test(chat)) throw invalid('target', 'must be a Telegram chat id (-1001234567890) or @channelname');
    return { target: chat, display: chat, config: {}, secretStored: false };
  },
  async deliver(channel, message, ctx) {
    const token = ctx.providers.telegramBotToken;
    if (!token) return { delivered: false, error: 'no Telegram bot is configured (TELEGRAM_BOT_TOKEN)' };
    const url = `${ctx.providers.telegramApiUrl}/bot${token}/sendMessage`;
    // Telegram caps a message at 4096 characters.
    const body = { chat_id: channel.target, text: clip(message.text, 4096), disable_web_page_preview: true };
    let result: DeliveryResult;
    try {
      result = telegramResult(await postJson(url, body, { ctx }));
    } catch (e) {
      result = errorResult(e);
    }
    return result.error ? { ...result, error: scrub(result.error, [token]) } : result;
  },
};
