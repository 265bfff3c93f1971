import { useEffect, type ReactNode } from 'react';
import { NavLink } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { openStream } from '../live/stream';
import { RateLimitBanner } from './RateLimitBanner';
import { StreamBanner } from './StreamBanner';
import { OrgSwitcher } from './OrgSwitcher';
import { SignOut } from './SignOut';
import { SearchBox } from './SearchBox';
import { useMe } from '../lib/me';

/** The frame of every signed-in page: navigation, the organisation, banners, and the live stream. */
export function Layout({ children }: { children: ReactNode }) {
  const qc = useQueryClient();
  const { me } = useMe();
  // One stream per tab while signed in to an organisation; a switch of organisation reopens it.
  useEffect(() => openStream(qc), [qc, me.organization.id]);
  return (
    <>
      <a className="skip" href="#content">Skip to content</a>
      <header className="top">
        <div className="bar">
          <NavLink to="/" className="brand" aria-label="Vigil overview">Vigil</NavLink>
          <nav aria-label="Main">
            <ul>
              <li><NavLink to="/" end>Overview</NavLink></li>
              <li><NavLink to="/monitors">Monitors</NavLink></li>
              <li><NavLink to="/incidents">Incidents</NavLink></li>
              <li><NavLink to="/channels">Channels</NavLink></li>
              <li><NavLink to="/maintenance">Maintenance</NavLink></li>
              <li><NavLink to="/on-call">On-call</NavLink></li>
              <li><NavLink to="/hosts">Hosts</NavLink></li>
              <li><NavLink to="/settings">Settings</NavLink></li>
            </ul>
          </nav>
          <div className="right">
            <SearchBox />
            <OrgSwitcher />
            <SignOut />
          </div>
        </div>
      </header>
      <div className="banners">
        <RateLimitBanner />
        <StreamBanner />
      </div>
      <main id="content" tabIndex={-1}>{children}</main>
    </>
  );
}
