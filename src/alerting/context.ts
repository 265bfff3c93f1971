import type { Services } from '../pipeline/context';
import type { DeliveryContext } from './channels/channel';

/** Outbound requests of a delivery give up after this long. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** The context one delivery attempt runs with. */
export function deliveryContext(services: Pick<Services, 'config' | 'net' | 'baseUrl'>, timeoutMs = DELIVERY_TIMEOUT_MS): DeliveryContext {
  return { net: services.net, providers: services.config.providers, signal: AbortSignal.timeout(timeoutMs), baseUrl: services.baseUrl() };
}
