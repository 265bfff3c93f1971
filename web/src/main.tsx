import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClientProvider } from '@tanstack/react-query';
import { BrowserRouter } from 'react-router';
import { queryClient } from './lib/queryClient';
import { App } from './App';
import { q } from './lib/queries';
import './styles.css';

// Opened straight at the monitor list (a link, a reload): its code and its one read start now,
// beside `/me`, instead of one after the other once the person is known. Signed out, the read's
// 401 leads to sign-in as `/me`'s does.
if (window.location.pathname === '/monitors') {
  void import('./pages/MonitorList');
  void queryClient.prefetchQuery(q.monitors());
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <App />
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
