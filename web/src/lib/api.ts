/** The app's one way to the server: the generated client, authenticated by the session cookie. */
import { createVigilClient } from '../../../clients/typescript/src/index.js';

export { ok, VigilApiError, type Schema } from '../../../clients/typescript/src/index.js';

export const vigil = createVigilClient({ baseUrl: '' });
export const api = vigil.api;
