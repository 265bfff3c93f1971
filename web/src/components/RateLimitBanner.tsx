import { useEffect, useState, useSyncExternalStore } from 'react';
import { vigil } from '../lib/api';

/**
 * Shown while the organisation's rate limit holds calls back: a countdown
 * from the server's Retry-After. Reads wait it out by themselves (the client
 * retries them), so the banner goes away on its own.
 */
export function RateLimitBanner() {
  const until = useSyncExternalStore(vigil.rateLimit.subscribe, () => vigil.rateLimit.until);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (until === null) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [until]);
  if (until === null) return null;
  const seconds = Math.max(0, Math.ceil((until - now) / 1000));
  return (
    <div className="banner warn" role="status">
      <strong>Too many requests.</strong>
      <span>Your organisation reached its request limit; Vigil continues in {seconds} s.</span>
    </div>
  );
}
